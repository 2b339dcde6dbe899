"""The op numbers of the compiled loops (``aten/native/scalar_ops.py``): each scalar function is
numbered where it is defined, by the table it registers with, never by a hand-counted range.

A loop closes over its op number and resolves ``table[number]`` while Numba types it, so a number
that pointed at another function would silently run the wrong math; these tests tie every number
to its function by name, and check that the kernel cache moves when an op is added.
"""
import ast
import inspect
import shutil

import numpy as np
import pytest
from numba import njit

from internals import _cuda_env
from internals.aten.native import scalar_ops as ops
from internals.aten.native.cpu import loops

TABLES = {"UNARY": ops.UNARY, "BINARY": ops.BINARY, "TERNARY": ops.TERNARY, "REDUCE": ops.REDUCE}


@pytest.mark.parametrize("table_name", TABLES)
def test_every_number_maps_back_to_its_function(table_name):
    table = TABLES[table_name]
    assert len(table) > 0
    for number, (name, fn) in enumerate(zip(table.names, table.functions)):
        assert getattr(ops, name) == number, f"{table_name}: ops.{name} is not {number}"
        assert table[number] is getattr(ops, fn.__name__), f"{table_name}[{number}] is not {fn.__name__}"


def test_names_and_functions_are_unique():
    for table in TABLES.values():
        assert len(set(table.names)) == len(table.names)
        assert len({id(fn) for fn in table.functions}) == len(table.functions)


def test_registering_a_name_twice_is_refused():
    table = ops.OpTable("unary")
    assert table.register(ops.neg) == 0
    assert table.register(ops.exp) == 1
    with pytest.raises(ValueError, match="NEG"):
        table.register(ops.neg)


def _module_assignments():
    tree = ast.parse(inspect.getsource(ops))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            yield node, [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def test_each_number_comes_from_a_register_call_beside_its_function():
    registered = {name for table in TABLES.values() for name in table.names}
    for node, names in _module_assignments():
        numbered = registered.intersection(names)
        if not numbered:
            continue
        call = node.value
        assert isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "register", \
            f"{sorted(numbered)} is assigned by hand (line {node.lineno}), not by a table's register()"
        assert len(names) == 1


def test_no_hand_counted_range_or_table_concatenation():
    for node, _ in _module_assignments():
        text = ast.unparse(node.value)
        assert "range(" not in text, f"line {node.lineno}: {text}"
    source = inspect.getsource(ops)
    for table_name in TABLES:
        assert f"{table_name} +=" not in source


def _compiled(op):
    # A closed-over int is a compile-time literal to Numba, as in the loops' factories.
    return njit(lambda a, b: ops.binary_op(op, a, b, 1.0))


def test_the_simulated_call_and_the_compiled_loop_agree_on_a_number():
    # The loop reads the number as a constant and compiles table[number] in: run one compiled
    # binary loop of each of two ops and compare with the table's Python function.
    for op, fn in ((ops.SUB, ops.sub), (ops.MAXIMUM, ops.maximum)):
        assert _compiled(op)(2.5, 4.0) == fn(2.5, 4.0, 1.0) == ops.binary_op(op, 2.5, 4.0, 1.0)
    out = np.zeros(3)
    a, b = np.array([1.0, 5.0, -2.0]), np.array([3.0, 2.0, -7.0])
    loops._build_binary(ops.SUB)[1](out, a, b, 1.0, False, np.array([3]), np.array([[1], [1], [1]]),
                                    np.zeros(3, np.int64))
    assert out.tolist() == (a - b).tolist()


def test_adding_an_op_changes_the_kernel_cache_key(tmp_path, monkeypatch):
    native = tmp_path / "native"
    shutil.copytree(_cuda_env._NATIVE, native)
    monkeypatch.setattr(_cuda_env, "_NATIVE", native)
    before = _cuda_env._kernel_sources_hash()
    with open(native / "scalar_ops.py", "a") as f:
        f.write("\n\n@register_jitable\ndef twice(x):\n    return x + x\nTWICE = UNARY.register(twice)\n")
    assert _cuda_env._kernel_sources_hash() != before
