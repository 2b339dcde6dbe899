"""Operators the tutorial snippets reach for -- ``F.leaky_relu``/``nn.LeakyReLU``,
``F.binary_cross_entropy``/``nn.BCELoss``, ``binary_cross_entropy_with_logits`` as one operator
(``BinaryCrossEntropyWithLogitsBackward0``), ``nn.NLLLoss``, ``index_add``, ``unique``, ``trace``,
``numel``/``as_tensor``/``broadcast_tensors``, the legacy tensor types, ``finfo``/``iinfo``.
(``index_add``'s structured kernels are tested in ``test_indexing.py``, ``torch.Size`` and the
public names in ``tests/c10/test_tensor_impl.py``.)

As ``tests/aten/test_tensor_shape.py``: PyTorch's OpInfo samples (as given and non-contiguous), then
everyday calls compared for values (exactly), strides, dtypes, grad_fn names, gradients,
warnings and error messages.
"""
import math
import warnings

import pytest
import torch
from helpers import (
    Adapter,
    check_opinfo_samples,
    compare_gradients_and_nodes,  # noqa: F401
    opinfo_cases,
    same_outcome,
)
from helpers import run as _run

import internals

F = internals.nn.functional
ADAPTERS = {
    "nn.functional.leaky_relu": Adapter(F.leaky_relu, kwargs=("negative_slope", "inplace")),
    "nn.functional.binary_cross_entropy": Adapter(F.binary_cross_entropy, kwargs=("weight", "reduction")),
    "nn.functional.binary_cross_entropy_with_logits":
        Adapter(F.binary_cross_entropy_with_logits, kwargs=("weight", "pos_weight", "reduction")),
    "index_add": Adapter(internals.index_add, "index_add", kwargs=("alpha",)),
    "trace": Adapter(internals.trace, "trace"),
}
OPINFO_CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool))
# binary_cross_entropy: torch takes log1p(-x) where internals has no log1p and takes log(1 - x):
# a few ulps apart near x = 0 (OpInfo's inputs are uniform in (0, 1))
BCE_TOL = {torch.float32: (1e-5, 1e-6), torch.float64: (1e-12, 1e-14)}


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[name]
    if name == "nn.functional.binary_cross_entropy":
        adapter = Adapter(adapter.ours, kwargs=adapter.kwargs, tol=BCE_TOL)
    check_opinfo_samples(name, dtype, adapter)


X = "lib.tensor([[-2.0, -0.5, 0.0], [0.25, 1.5, 3.0]])"
P = "lib.tensor([[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]])"
T = "lib.tensor([[0.0, 1.0, 1.0], [0.0, 1.0, 0.5]])"
PROGRAMS = [
    f"lib.nn.functional.leaky_relu({X})", f"lib.nn.functional.leaky_relu({X}, 0.2)",
    f"lib.nn.functional.leaky_relu({X}.t(), negative_slope=-1.5)",
    f"lib.nn.functional.leaky_relu({X}.double(), 0.1, inplace=True)",
    f"lib.nn.LeakyReLU(0.3)({X}.requires_grad_())", "lib.nn.functional.leaky_relu(lib.arange(3))",
    f"lib.nn.functional.binary_cross_entropy({P}, {T})",
    f"lib.nn.functional.binary_cross_entropy({P}.requires_grad_(), {T}, reduction='sum')",
    f"lib.nn.functional.binary_cross_entropy({P}, {T}, reduction='none')",
    f"lib.nn.functional.binary_cross_entropy({P}.t(), {T}.t(), weight=lib.tensor([1.0, 2.0]))",
    f"lib.nn.functional.binary_cross_entropy({P} * 2, {T})", f"lib.nn.functional.binary_cross_entropy({P}, {T} - 1)",
    f"lib.nn.functional.binary_cross_entropy({P}, {T}[0])",
    f"lib.nn.functional.binary_cross_entropy({P}, {T}, reduction='avg')",
    f"lib.nn.BCELoss()(lib.sigmoid({X}.requires_grad_()), {T})",
    f"lib.nn.BCELoss(weight=lib.tensor([0.5, 1.0, 2.0]), reduction='sum')({P}, {T})",
    f"lib.nn.functional.binary_cross_entropy_with_logits({X}.requires_grad_(), {T})",
    f"lib.nn.functional.binary_cross_entropy_with_logits({X}, {T}, pos_weight=lib.tensor([1.0, 2.0, 3.0]))",
    f"lib.nn.BCEWithLogitsLoss(reduction='sum')({X}.requires_grad_(), {T})",
    f"lib.binary_cross_entropy_with_logits({X}, {T})",
    "lib.nn.NLLLoss()(lib.log_softmax(lib.arange(6.).reshape(2, 3).requires_grad_(), 1), lib.tensor([2, 0]))",
    "lib.nn.NLLLoss(weight=lib.tensor([1.0, 2.0, 3.0]), ignore_index=0)("
    "lib.log_softmax(lib.arange(6.).reshape(2, 3), 1), lib.tensor([2, 0]))",
]


# binary_cross_entropy takes log(1 - x) for torch's log1p(-x), and the pos_weight form of the
# logits loss softplus(-x) for torch's -log_sigmoid(x): a last-bit difference, at most
CLOSE = ("binary_cross_entropy(", "BCELoss(", "pos_weight=")


def _values_close(ours, theirs):
    """Everything exact but the values, which must agree to float32 rounding."""
    (meta_i, messages_i), (meta_t, messages_t) = ours, theirs
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=3e-7, atol=1e-7)


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    """(A message naming a Size names the library's type, as the Size's repr does.)"""
    ours, theirs = _run(internals, program), _run(torch, program)
    if ours[0] == "error":
        ours = (*ours[:2], ours[2].replace("internals.", "torch."))
    if theirs[0] != "error" and any(c in program for c in CLOSE):
        _values_close(ours, theirs)
    else:
        assert ours == theirs


GRAD_CASES = {
    "leaky_relu": lambda lib, x, t: lib.nn.functional.leaky_relu(x, 0.2),
    "LeakyReLU in place after a clone": lambda lib, x, t: lib.nn.LeakyReLU(0.2, inplace=True)(x * 1),
    "binary_cross_entropy": lambda lib, x, t: lib.nn.functional.binary_cross_entropy(lib.sigmoid(x), t),
    "binary_cross_entropy, weighted sum": lambda lib, x, t: lib.nn.functional.binary_cross_entropy(
        lib.sigmoid(x), t, weight=lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), reduction="sum"),
    "index_add": lambda lib, x, t: x.index_add(1, lib.tensor([2, 0, 2]), t * 2, alpha=3),
    "trace": lambda lib, x, t: (x * t).trace() * x,
    "index_add_ of a clone": lambda lib, x, t: (x * 1).index_add_(0, lib.tensor([1, 1]), t),
    "bce with logits": lambda lib, x, t: lib.nn.functional.binary_cross_entropy_with_logits(x, t),
    "bce with logits, pos_weight and weight": lambda lib, x, t: lib.nn.functional.binary_cross_entropy_with_logits(
        x, t, weight=lib.tensor([2.0, 1.0, 0.5], dtype=lib.float64),
        pos_weight=lib.tensor([3.0, 1.0, 2.0], dtype=lib.float64), reduction="sum"),
}




@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name])


def test_module_reprs():
    for make in (lambda nn: nn.LeakyReLU(), lambda nn: nn.LeakyReLU(0.2, inplace=True), lambda nn: nn.BCELoss(),
                 lambda nn: nn.NLLLoss(), lambda nn: nn.Sequential(nn.Linear(2, 2), nn.LeakyReLU(0.1))):
        assert repr(make(internals.nn)) == repr(make(torch.nn))
    assert list(dict(internals.nn.BCELoss(weight=internals.ones(2)).named_buffers())) == ["weight"]


def test_leaky_relu_in_place_with_a_negative_slope_has_torchs_backward_error():
    errors = []
    for lib in (torch, internals):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = lib.nn.functional.leaky_relu(x * 1, -0.5, inplace=True)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_bce_of_an_input_outside_zero_one():
    for lib in (torch, internals):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            lib.nn.functional.binary_cross_entropy(lib.tensor([math.nan]), lib.tensor([0.0]))


@pytest.mark.parametrize("weight_shape", [(4,), (2, 2), (3, 2, 3)])
def test_bce_weight_broadcast_as_torch_broadcast_shapes(weight_shape):
    """The weight is expanded to torch.broadcast_shapes(target, weight): its message on a
    mismatch, or the broadcast (and larger) loss."""
    same_outcome(lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.full((2, 3), 0.25), lib.ones(2, 3), weight=lib.ones(weight_shape), reduction="none"))


# ------------------------------------------------------------------------------ everyday namespace functions
NAMESPACE = [
    "lib.numel(lib.ones(2, 3))", "lib.numel(3)", "lib.is_floating_point(lib.ones(1))", "lib.is_complex(lib.ones(1))",
    "lib.broadcast_tensors(lib.ones(3, 1), lib.arange(4))", "lib.broadcast_tensors(lib.ones(2), lib.ones(3))",
    "lib.as_tensor([1.5, 2.5])", "lib.as_tensor([1, 2], dtype=lib.float64)", "lib.as_tensor(lib.arange(3))",
    "lib.as_tensor(lib.arange(3), dtype=lib.float32)",
    "lib.LongTensor([1, 2])", "lib.FloatTensor([[1, 2]])", "lib.DoubleTensor(2, 3).shape", "lib.ByteTensor([3])",
    "lib.BoolTensor([True, False])", "lib.IntTensor(lib.Size([2, 2])).shape", "lib.LongTensor()", "lib.HalfTensor([1])",
    "lib.BFloat16Tensor([1.5])", "lib.CharTensor([-1])", "lib.ShortTensor([7])", "lib.LongTensor('a')",
    "isinstance(lib.ones(1), lib.FloatTensor)", "isinstance(lib.ones(1), lib.LongTensor)",
    "repr(lib.LongTensor)", "repr(lib.finfo(lib.float32))", "repr(lib.finfo(lib.float16))",
    "repr(lib.finfo(lib.bfloat16))", "repr(lib.finfo(lib.float64))", "repr(lib.finfo())",
    "repr(lib.finfo(lib.complex64))", "repr(lib.iinfo(lib.int32))", "repr(lib.iinfo(lib.uint8))",
    "[(f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype) for f in "
    "map(lib.finfo, (lib.float16, lib.bfloat16, lib.float32, lib.float64))]",
    "[(i.bits, i.max, i.min, i.dtype) for i in map(lib.iinfo, (lib.int8, lib.int16, lib.int32, lib.int64))]",
    "lib.finfo(lib.int32)", "lib.iinfo(lib.bool)", "lib.finfo(lib.float32) == lib.finfo(lib.float32)",
    "lib.ones(2).is_cpu", "lib.ones(2, requires_grad=True).numpy()",
    "lib.ones(2, requires_grad=True).numpy(force=True)",
    "(lambda x: (lib.tensor([x, x]), x))(lib.tensor(1.0, requires_grad=True))[0]",
    "lib.arange(6).reshape(2, 3).trace()", "lib.arange(6, dtype=lib.uint8).reshape(3, 2).t().trace()",
    "lib.ones(2).trace()", "lib.ones(2, 2, dtype=lib.bool).trace()",
    "lib.unique(lib.tensor([3, 1, 2, 3, 1]))", "lib.unique(lib.tensor([3, 1, 2, 3, 1]), return_inverse=True)",
    "lib.unique(lib.tensor([[1.5, 0.5], [1.5, 2.]]), return_counts=True)",
    "lib.tensor([[3], [1], [3]]).unique(return_inverse=True, return_counts=True)",
    "lib.unique(lib.tensor([True, False, True]))", "lib.unique(lib.tensor([], dtype=lib.int64), return_counts=True)",
    "lib._unique2(lib.tensor([2, 2, 0]))", "lib.unique(lib.ones(2, requires_grad=True)).grad_fn.name()",
    "lib.unique(lib.ones(2, requires_grad=True)).sum().backward()",
    "lib.zeros(5).index_add_(0, lib.tensor([0, 4, 0]), lib.tensor([1., 2., 3.]))",
    "lib.index_add(lib.zeros(3, 4).t(), 0, lib.tensor([0, 0]), lib.ones(2, 3), alpha=2)",
    "lib.zeros(3, 4).index_add_(1, lib.tensor([3, 0]), lib.arange(6.).reshape(3, 2))",
    "lib.zeros(3, 4).index_add_(0, lib.tensor([[0]]), lib.ones(1, 4))",
    "lib.zeros(3, 4).index_add_(0, lib.tensor([0.]), lib.ones(1, 4))",
    "lib.zeros(3, 4).index_add_(0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64))",
    "lib.zeros(3, 4).index_add_(1, lib.tensor([0, 1]), lib.ones(3, 3))",
    "lib.zeros(3, 4).index_add_(0, lib.tensor([-1]), lib.ones(1, 4))",
    "lib.zeros(3).index_add_(0, lib.tensor([5]), lib.ones(1))",
    "lib.zeros(3).index_add_(0, lib.tensor([-1]), lib.ones(1))",
    "lib.zeros(3, 4).index_add_(2, lib.tensor([0]), lib.ones(1, 4))",
    "repr((lambda y: (y.__setitem__(0, 10.0), y)[1])(lib.ones(3, requires_grad=True).clone()))",
]


def _plain(lib, value):
    """A value both libraries can be compared by: tensors described, names made torch's."""
    if isinstance(value, (list, tuple)) and not isinstance(value, lib.Size):
        return type(value).__name__, [_plain(lib, v) for v in value]
    if isinstance(value, lib.Tensor):
        return str(value.dtype)[len(lib.__name__) + 1:], tuple(value.shape), value.stride(), value.tolist()
    if hasattr(value, "tolist"):        # a NumPy array
        return "ndarray", value.tolist()
    return str(value).replace(f"{lib.__name__}.", "torch.")


@pytest.mark.parametrize("program", NAMESPACE)
def test_namespace_functions(program):
    results = []
    for lib in (torch, internals):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch warns converting a tensor that requires grad
            try:
                results.append(_plain(lib, eval(program, {"lib": lib})))
            except Exception as exc:     # noqa: BLE001 -- the class and message are compared
                results.append((type(exc).__name__, str(exc).replace(f"{lib.__name__}.", "torch.")))
    assert results[1] == results[0]


def test_as_tensor_shares_a_numpy_arrays_memory():
    import numpy as np
    for lib in (torch, internals):
        a = np.array([1, 2, 3])
        t = lib.as_tensor(a)
        a[0] = 9
        assert t.tolist() == [9, 2, 3]
        assert lib.as_tensor(a, dtype=lib.float32).tolist() == [9.0, 2.0, 3.0]
