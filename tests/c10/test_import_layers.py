"""The package's layers point down: c10 < aten < autograd < the frontend (DESIGN.md, "The package
mirrors PyTorch").

Every module's imports are read with ``ast`` (those at module level and those inside functions),
resolved to the internals module they load, and checked: c10 imports nothing of internals outside
c10; the module-level imports form no cycle; and the few other imports that point up a layer are
the ones listed below, each with the reason it is still there.
"""
import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "internals"

# The layer of each top-level part of the package; anything not named is frontend (3): _tensor,
# nn, optim, utils, cuda (torch.cuda), fx, _dynamo, ... ``_tensor_base`` is the TensorBase ATen
# works on, below the frontend Tensor; ``_cuda_env`` settles Numba's environment before Numba is
# imported, with ``_cuda_link`` (which linker a driver older than the CUDA compiler needs): both
# read only the system, and import nothing else of the package.
LAYERS = {"c10": 0, "aten": 1, "_tensor_base": 1, "_cuda_env": 1, "_cuda_link": 1, "autograd": 2}
FRONTEND = 3

# Imports that still point up a layer, as (importing module, imported module). The list may
# shrink, never grow: a new upward import is a layering mistake to fix, not to add here.
ALLOWED_UPWARD = {
    # The autograd profiler's record_function operators are called through ``internals.ops``.
    ("internals.autograd.profiler", "internals._ops"),
    # Python dispatch modes (torch/utils/_python_dispatch.py) are consulted by the ADInplaceOrView
    # kernels and by saved-tensor hooks, as torch's C++ consults the mode stack it keeps in c10.
    ("internals.autograd.ad_inplace_or_view", "internals.utils._python_dispatch"),
    ("internals.autograd.graph", "internals.utils._python_dispatch"),
    ("internals.aten.native.blas", "internals.utils._python_dispatch"),
    # The first cuda allocation announces Numba's simulator, which the torch.cuda frontend owns.
    ("internals.aten.empty_tensor", "internals.cuda"),
    # ``torch.tensor``'s data argument is parsed as the Python binding parses it.
    ("internals.aten.native.tensor_factories", "internals._python_arg_parser"),
    # torch.return_types' named tuples (values, indices) are built by the reductions that return them.
    ("internals.aten.native.batch_linear_algebra", "internals.return_types"),
    ("internals.aten.native.reduce_ops", "internals.return_types"),
}


def _module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _loaded_module(name):
    """The internals module an import of ``name`` runs (``name`` may end in a function's name)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _targets(module, is_package, node):
    """The internals modules one import statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "internals"]
    if node.level == 0:
        base = node.module or ""
        if base.split(".")[0] != "internals":
            return []
    else:
        parts = module.split(".")[: len(module.split(".")) - (0 if is_package else 1)]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


# The fields of a node that hold statements, directly or (the clauses) in each element's body.
STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
CLAUSE_FIELDS = ("handlers", "cases")


def _imports(module):
    """(imported module, at module level?) for every import in ``module``'s source."""
    path = MODULES[module]
    found = []

    def walk(nodes, at_module_level):
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend((_loaded_module(t), at_module_level)
                             for t in _targets(module, path.name == "__init__.py", node))
                continue
            inside_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            # An import is a statement: only the statement lists of a node (a body, an else, an
            # except or case clause) can hold one, never an expression, so nothing else is walked.
            for field in STATEMENT_FIELDS:
                for child in getattr(node, field, ()):
                    walk(getattr(child, "body", ()) if field in CLAUSE_FIELDS else [child],
                         at_module_level and not inside_function)

    walk(ast.parse(path.read_text(), str(path)).body, True)
    return found


@functools.cache
def all_imports():
    """{module: its imports}, read once, when a test first asks: parsing every source takes
    seconds, which collection (``pytest -k other_thing``) need not pay."""
    return {module: _imports(module) for module in MODULES}


def _layer(module):
    parts = module.split(".")
    return LAYERS.get(parts[1], FRONTEND) if len(parts) > 1 else FRONTEND


def _ancestors(module):
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _module_level_graph():
    """Module -> the modules importing it runs at once. Importing ``a.b.c`` runs ``a`` and ``a.b``
    first, so those count too, except a module's own ancestors, which are already being imported
    (``import internals`` inside internals.fx reads attributes at call time, as torch.fx does)."""
    graph = {module: set() for module in MODULES}
    for module, imports in all_imports().items():
        for target, at_module_level in imports:
            if at_module_level:
                graph[module].update(t for t in [*_ancestors(target), target]
                                     if t != module and t not in _ancestors(module))
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_module_is_read():
    assert len(MODULES) > 100 and "internals.c10.generator" in MODULES
    # A function-level import is read too (the storage's cuda allocator was one, once).
    assert ("internals.aten.empty_tensor", False) not in all_imports()["internals.aten.native.tensor_factories"]
    assert ("internals.cuda", False) in all_imports()["internals.aten.empty_tensor"]


def test_c10_imports_nothing_above_it():
    upward = sorted((module, target) for module, imports in all_imports().items() if _layer(module) == 0
                    for target, _ in imports if _layer(target) != 0)
    assert upward == []


def test_no_module_level_import_cycle():
    assert _cycles(_module_level_graph()) == []


def test_other_upward_imports_are_the_listed_ones():
    upward = {(module, target) for module, imports in all_imports().items()
              for target, _ in imports if _layer(target) > _layer(module)}
    assert upward <= ALLOWED_UPWARD, f"new upward imports: {sorted(upward - ALLOWED_UPWARD)}"
    assert upward == ALLOWED_UPWARD, f"fixed, so take them off the list: {sorted(ALLOWED_UPWARD - upward)}"


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_cycle_finder_finds_cycles(graph, expected):
    assert _cycles(graph) == expected


def test_parser_resolves_relative_and_package_imports():
    # ``from . import mt19937`` inside the c10 package names the module; ``from .device import
    # as_device`` names the module, not the function.
    targets = {target for target, _ in all_imports()["internals.c10.generator"]}
    assert {"internals.c10.mt19937", "internals.c10.device"} <= targets
