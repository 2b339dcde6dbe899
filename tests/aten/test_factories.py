"""Factories are operators: declared in the YAML, called through the dispatcher (BackendSelect
picks their backend), seen by TorchDispatchMode and the profiler as torch's are; and ``logspace``'s everyday calls
and ``Tensor.new_tensor`` (at the end).

Tests ``internals.aten.native.tensor_factories`` (aten/src/ATen/native/TensorFactories.cpp,
RangeFactories.cpp)."""

import pytest
import torch
from helpers import (
    assert_same,
    assert_same_error,
    logging_modes,
    ours_and_torchs,
)
from helpers import dispatch_table as table
from helpers import run as _run

import internals
from internals.aten import dispatcher
from internals.aten.native import tensor_factories

# The operators whose kernels tensor_factories registers (empty_strided's is aten/empty_tensor.py's,
# which TensorIterator calls too).
FACTORY_OPS = sorted(n for n, op in dispatcher.operators.items()
                     if any(k.fn is not None and getattr(tensor_factories, getattr(k.fn, "__name__", ""), None) is k.fn
                            for k in op.kernels.values()))       # (a fallthrough's fn is None)


def test_the_factories_are_operators():
    assert {n.split("::")[1] for n in FACTORY_OPS} == {
        "empty.memory_format", "empty_strided", "zeros", "ones", "full", "arange", "arange.start", "arange.start_step",
        "linspace", "logspace", "linspace.Tensor_Tensor", "linspace.Tensor_Scalar", "linspace.Scalar_Tensor",
        "logspace.Tensor_Tensor", "logspace.Tensor_Scalar", "logspace.Scalar_Tensor", "eye", "eye.m", "empty_like",
        "zeros_like", "ones_like", "full_like", "lift_fresh",
        "lift_fresh_copy", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "scalar_tensor",
        "tril_indices", "triu_indices"}
    # the random factories (rand, randn, randint, randperm, *_like) are in distributions.py: test_random.py


# ---------------------------------------------------------------------- what a TorchDispatchMode sees
CALLS = {
    "empty": lambda lib, x: lib.empty(2, 3),
    "empty_tuple_dtype": lambda lib, x: lib.empty((2, 3), dtype=lib.int64, device="cpu"),
    "empty_strided": lambda lib, x: lib.empty_strided((2, 3), (1, 2)),
    "empty_sparse": lambda lib, x: lib.empty(2, 3, layout=lib.sparse_coo),
    "zeros": lambda lib, x: lib.zeros(2, 3),
    "zeros_list": lambda lib, x: lib.zeros([2, 3], dtype=lib.float64),
    "zeros_requires_grad": lambda lib, x: lib.zeros(2, requires_grad=True),
    "zeros_sparse": lambda lib, x: lib.zeros(2, 3, layout=lib.sparse_coo),
    "ones": lambda lib, x: lib.ones(3, pin_memory=False),
    "full": lambda lib, x: lib.full((2,), 3.),
    "full_int": lambda lib, x: lib.full((2, 2), 7),
    "arange_end": lambda lib, x: lib.arange(5),
    "arange_start": lambda lib, x: lib.arange(1, 5),
    "arange_start_step": lambda lib, x: lib.arange(0., 1., .25),
    "linspace": lambda lib, x: lib.linspace(0, 1, 5),
    "eye": lambda lib, x: lib.eye(3),
    "eye_m": lambda lib, x: lib.eye(2, 3),
    "rand": lambda lib, x: lib.rand(2),
    "randn": lambda lib, x: lib.randn(2, 3),
    "rand_generator": lambda lib, x: lib.rand(2, generator=lib.Generator().manual_seed(0)),
    "randn_generator": lambda lib, x: lib.randn(2, generator=lib.Generator().manual_seed(0)),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x, dtype=lib.int64),
    "full_like": lambda lib, x: lib.full_like(x, 2),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "rand_like_generator": lambda lib, x: lib.rand_like(x, generator=lib.Generator().manual_seed(0)),
    "tensor": lambda lib, x: lib.tensor([1., 2.]),
    "tensor_requires_grad": lambda lib, x: lib.tensor([[1, 2]], dtype=lib.float32, requires_grad=True),
    "zero_": lambda lib, x: x.clone().zero_(),
}
RANDOM = {name for name in CALLS if "rand" in name or "empty" in name}    # values differ (or are garbage)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_logging_mode_sees_torchs_factory_operators(name):
    xt = torch.arange(6.).reshape(2, 3).t()
    xi = internals.from_torch(xt)
    log_t, log_i = [], []
    theirs, ours = logging_modes(log_t, log_i)
    with theirs:
        rt = CALLS[name](torch, xt)
    with ours:
        ri = CALLS[name](internals, xi)
    assert log_i == log_t
    assert (ri.requires_grad, ri.is_leaf, ri._version, str(ri.layout).split(".")[-1]) == \
        (rt.requires_grad, rt.is_leaf, rt._version, str(rt.layout).split(".")[-1])
    if rt.layout == torch.sparse_coo:
        assert (tuple(ri.shape), ri._nnz(), ri.sparse_dim()) == (tuple(rt.shape), rt._nnz(), rt.sparse_dim())
    elif name in RANDOM:
        assert_same(ri.detach().zero_(), rt.detach().zero_())       # shape, strides, offset, dtype
    else:
        assert_same(ri.detach(), rt.detach())


def test_calling_the_operator_directly_skips_the_bindings_guard():
    """``torch.zeros`` runs below ADInplaceOrView (its zero_ is not a user's write); the bare
    operator does not, so its zero_ bumps the version, in both libraries."""
    for lib in (torch, internals):
        assert lib.zeros(3)._version == 0
        assert lib.ops.aten.zeros.default([3])._version == 1
        assert lib.ops.aten.empty.memory_format([3])._version == 0
        assert lib.ops.aten.zeros_like.default(lib.ones(2, requires_grad=True))._version == 0   # via autograd


def test_backend_select_routes_by_device_and_layout():
    with dispatcher.trace() as log:
        internals.zeros(2)
    assert [(op, key, kind) for op, key, kind, _ in log] == [
        ("aten::zeros", "BackendSelect", "kernel"), ("aten::zeros", "CPU", "default backend kernel"),
        ("aten::empty.memory_format", "BackendSelect", "kernel"), ("aten::empty.memory_format", "CPU", "kernel"),
        ("aten::zero_", "CPU", "kernel")]
    with dispatcher.trace() as log:
        internals.empty(2, device="cuda")
    assert [key for _, key, _, _ in log] == ["BackendSelect", "CUDA"]
    with dispatcher.trace() as log:
        internals.empty(2, layout=internals.sparse_coo)
    assert [key for op, key, _, _ in log if op == "aten::empty.memory_format"] == ["BackendSelect", "SparseCPU"]


# ---------------------------------------------------------------------- dispatch tables
# Keys whose entries mean the same in both libraries. Left out: CUDA and SparseCUDA (torch's CPU
# wheel has no CUDA kernels), Meta (internals serves it with one backend fallback and a wrapper
# around each composite kernel, where torch registers a kernel per operator), and the Autograd keys
# (see the next test).
COMPARED = ["CPU", "SparseCPU", "BackendSelect", "Python", "ADInplaceOrView", "AutocastCPU", "AutocastCUDA",
            "PythonTLSSnapshot"]


@pytest.mark.parametrize("op", FACTORY_OPS + ["aten::zero_"])
def test_factory_dispatch_tables_match_torch(op):
    ours, theirs = table(internals._C._dispatch_dump_table(op)), table(torch._C._dispatch_dump_table(op))
    assert {k: ours.get(k) for k in COMPARED} == {k: theirs.get(k) for k in COMPARED}


@pytest.mark.parametrize("op", ["aten::empty.memory_format", "aten::zeros"])
def test_autograd_entries_run_the_factory_below_autograd(op):
    """torch's generated VariableType kernel of a factory only redispatches below autograd (no
    input can require grad); internals' autograd fallback does the same, under its own label."""
    ours, theirs = table(internals._C._dispatch_dump_table(op)), table(torch._C._dispatch_dump_table(op))
    for key in ("AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta"):
        assert theirs[key] == (False, "autograd kernel")
        assert ours[key] == (False, "backend fallback")


# ---------------------------------------------------------------------- the profiler
def torch_rows(prof):
    """Operator names, nested calls indented, from torch's profiler events."""
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    depth = {}
    rows = []
    for e in events:
        depth[e.id] = depth.get(e.cpu_parent.id, -1) + 1 if e.cpu_parent is not None else 0
        rows.append("  " * depth[e.id] + e.name)
    return rows


def internals_rows(prof):
    rows = []

    def walk(events, d):
        for e in events:
            rows.append("  " * d + e.name)
            walk(e.children, d + 1)
    walk(prof._events, 0)
    return rows


NESTED = {
    "zeros": lambda lib, x: lib.zeros(3),
    "ones": lambda lib, x: lib.ones(3),
    "full": lambda lib, x: lib.full((3,), 2.),
    "empty_strided": lambda lib, x: lib.empty_strided((2, 3), (1, 2)),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.),
    "empty_like": lambda lib, x: lib.empty_like(x),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_profiler_rows_nest_like_torchs(name):
    xt = torch.ones(2, 3)
    xi = internals.from_torch(xt)
    with torch.profiler.profile() as pt:
        NESTED[name](torch, xt)
    with internals.profiler.profile() as pi:
        NESTED[name](internals, xi)
    assert internals_rows(pi) == torch_rows(pt)


def test_profiler_table_for_zeros():
    with torch.profiler.profile() as pt:
        torch.zeros(3)
    with internals.profiler.profile() as pi:
        internals.zeros(3)
    ours = {e.key: e.count for e in pi.key_averages()}
    assert ours == {e.key: e.count for e in pt.key_averages()} == {"aten::zeros": 1, "aten::empty": 1, "aten::zero_": 1}
    assert internals_rows(pi) == ["aten::zeros", "  aten::empty", "  aten::zero_"]


# ---------------------------------------------------------------------- bindings and errors
@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 3), lambda lib: lib.zeros((2, 3)), lambda lib: lib.zeros([2, 3]),
    lambda lib: lib.zeros(()),
    lambda lib: lib.ones(2, dtype=lib.float64, device="cpu", layout=lib.strided, pin_memory=False),
    lambda lib: lib.full([2], True), lambda lib: lib.arange(2, 11, 3, dtype=lib.float64), lambda lib: lib.eye(2, m=3),
    lambda lib: lib.linspace(-1., 1., steps=4), lambda lib: lib.empty(size=(0, 2)).zero_(),
    lambda lib: lib.ones_like(lib.ones(3, 2).t(), memory_format=lib.contiguous_format),
    lambda lib: lib.zeros_like(lib.ones(2, 3, 4, 5), memory_format=lib.channels_last),
])
def test_bindings_accept_torchs_spellings(call):
    assert_same(call(internals), call(torch))


ERRORS = {
    "negative_zeros": lambda lib: lib.zeros(-1),
    "negative_empty": lambda lib: lib.empty(2, -1),
    "full_int_size": lambda lib: lib.full(2, 3.),
    "int_rand": lambda lib: lib.rand(2, dtype=lib.int64),
    "int_randn_like": lambda lib: lib.randn_like(lib.ones(2, dtype=lib.int64)),
    "int_requires_grad": lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True),
    "arange_zero_step": lambda lib: lib.arange(0, 1, 0),
    # torch's arange kernel lists the real dtypes: no bool, no complex (it used to count in them)
    "arange_bool": lambda lib: lib.arange(3, dtype=lib.bool),
    "arange_bool_empty": lambda lib: lib.arange(0, dtype=lib.bool),
    "arange_complex": lambda lib: lib.arange(0., 3., 0.5, dtype=lib.complex128),
    "negative_eye": lambda lib: lib.eye(-1),
    "unknown_keyword": lambda lib: lib.ones(2, colour="red"),
    "bad_generator": lambda lib: lib.rand(2, generator=3),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_factory_errors_match_torch(case):
    ours, theirs = assert_same_error(lambda: ERRORS[case](internals), lambda: ERRORS[case](torch))
    if case not in ("unknown_keyword", "bad_generator"):    # those list every signature, torch's has more
        assert str(ours) == str(theirs)


@pytest.mark.parametrize("args, dtype", [((0.5, 1.5, 1), "complex128"), ((0.5, 1.5, 4), "complex64"),
                                         ((1 + 2j, 3 - 1j, 3), "complex128"),
                                         ((-1.3 + 0.1j, 7.1 - 2.2j, 101), "complex64"), ((0, 1, 0), "complex128"),
                                         ((1 + 2j, 3 - 1j, 5), None), ((1, 3 - 1j, 2), None)])
def test_complex_linspace_steps_each_part_as_torch_does(args, dtype):
    """A complex linspace is the real one of each part, bit for bit (it used to truncate the
    ends to integers: linspace(0.5, 1.5, 1, dtype=complex128) was 0); a complex end without a
    dtype gives the default dtype's complex type."""
    def run(lib):
        return lib.linspace(*args, **({} if dtype is None else {"dtype": getattr(lib, dtype)}))
    assert_same(run(internals), run(torch), ulps=0)


def test_complex_linspace_refuses_a_real_dtype():
    ours, theirs = assert_same_error(lambda: internals.linspace(1 + 2j, 3, 3, dtype=internals.float64),
                                     lambda: torch.linspace(1 + 2j, 3, 3, dtype=torch.float64))
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("dtype", ["bool", "complex64"])
def test_arange_of_a_dtype_without_a_kernel_is_laid_out_on_meta(dtype):
    """torch's meta arange takes any dtype: only the kernels refuse bool and complex."""
    def run(lib):
        t = lib.arange(0, 5, 2, dtype=getattr(lib, dtype), device="meta")
        return t.shape, t.stride(), str(t.dtype).split(".")[-1], t.device.type
    assert run(internals) == run(torch)


# linspace and logspace take 0-dim tensors for either end (their Tensor_Tensor, Tensor_Scalar and
# Scalar_Tensor overloads, and the out= forms of each): the ends read as numbers.
TENSOR_ENDS = {
    "both float": lambda lib: (lib.tensor(1.), lib.tensor(3.), 5),
    "start int64": lambda lib: (lib.tensor(1), 3.5, 4),
    "end float64": lambda lib: (2, lib.tensor(3.5, dtype=lib.float64), 4),
    "one step": lambda lib: (lib.tensor(-1.), lib.tensor(2.), 1),
}


@pytest.mark.parametrize("name", ["linspace", "logspace"])
@pytest.mark.parametrize("ends", TENSOR_ENDS)
def test_linspace_and_logspace_with_tensor_ends(name, ends):
    ours, theirs = (getattr(lib, name)(*TENSOR_ENDS[ends](lib)) for lib in (internals, torch))
    assert_same(ours, theirs, ulps=1)


def test_linspace_with_a_complex_tensor_end():
    ours, theirs = (lib.linspace(lib.tensor(1 + 2j), lib.tensor(3.), 3) for lib in (internals, torch))
    assert_same(ours, theirs, ulps=0)


@pytest.mark.parametrize("name", ["linspace", "logspace"])
def test_linspace_and_logspace_with_tensor_ends_take_dtype_and_out(name):
    def run(lib):
        made = getattr(lib, name)(lib.tensor(0.5), lib.tensor(2.), 4, dtype=lib.float64, requires_grad=True)
        out = lib.empty(2, dtype=lib.float64)
        returned = getattr(lib, name)(lib.tensor(0.5), 2., 3, out=out)
        return made, out, returned is out
    (made, out, same), (t_made, t_out, t_same) = run(internals), run(torch)
    assert made.requires_grad and t_made.requires_grad and same and t_same
    assert_same(made.detach(), t_made.detach(), ulps=1)
    assert_same(out, t_out, ulps=1)


@pytest.mark.parametrize("name", ["linspace", "logspace"])
@pytest.mark.parametrize("ends", [lambda lib: (lib.tensor([1., 2.]), lib.tensor(3.)),
                                  lambda lib: (lib.tensor(1.), lib.ones(2, 1)),
                                  lambda lib: (lib.tensor([1., 2.]), 3.), lambda lib: (1., lib.tensor([3.]))])
def test_linspace_and_logspace_refuse_tensor_ends_with_dimensions(name, ends):
    ours, theirs = assert_same_error(lambda: getattr(internals, name)(*ends(internals), 5),
                                     lambda: getattr(torch, name)(*ends(torch), 5))
    assert str(ours) == str(theirs)


def _same(program, **env):
    assert _run(internals, program, **env) == _run(torch, program, **env)


# ---------------------------------------------------------------------------------- logspace
LOGSPACE = [
    "lib.logspace(0, 2, 5)", "lib.logspace(-1.3, 2.7, 7, base=2)", "lib.logspace(0, 3, 4, dtype=lib.long)",
    "lib.logspace(0.1, 3.3, 6, dtype=lib.float64)", "lib.logspace(0.5, 3, 1)", "lib.logspace(0.5, 3, 0)",
    "lib.logspace(1, 10, 10, base=3, dtype=lib.int32)", "lib.logspace(2, -2, 9, base=0.5)",
    "lib.logspace(0, 1, 101, dtype=lib.float64)", "lib.logspace(-3, 3, 13)", "lib.logspace(0, 2, -1)",
    "lib.logspace(0, 2, 3, out=lib.empty(0))", "lib.logspace(0, 2, 3, out=lib.empty(5, dtype=lib.float64))",
    "lib.logspace(0, 2, 3, requires_grad=True)",
]


@pytest.mark.parametrize("program", LOGSPACE)
def test_logspace(program):
    _same(program)


def test_new_tensor():
    """The source tensor's dtype and device unless given; from a tensor, a copy and torch's warning."""
    for make in (lambda lib, x: x.new_tensor([1, 2]), lambda lib, x: x.new_tensor([1, 2], dtype=lib.int32),
                 lambda lib, x: x.new_tensor(3), lambda lib, x: x.new_tensor([[1.5]], requires_grad=True)):
        ours = make(internals, internals.tensor([1.0], dtype=internals.float64))
        theirs = make(torch, torch.tensor([1.0], dtype=torch.float64))
        assert_same(ours, theirs, rtol=0, atol=0)
        assert ours.requires_grad == theirs.requires_grad
    source, source_t = ours_and_torchs([1, 2], torch.int64)
    with pytest.warns(UserWarning) as ours:
        copy = internals.ones(1).new_tensor(source)
    with pytest.warns(UserWarning) as theirs:
        expected = torch.ones(1).new_tensor(source_t)
    assert str(ours[0].message) == str(theirs[0].message)
    assert_same(copy, expected, rtol=0, atol=0)
    assert internals.ones(1).cuda().new_tensor([2]).device.type == "cuda"
