"""The multi-tensor operators (``torch._foreach_*``) against torch: every overload's values, dtypes,
shapes and strides; the list checks and their errors; in-place forms returning the list given;
and autograd (one node per call, its name, its edges, the gradients)."""
import pytest
import torch
from helpers import (
    LIBM_ULPS,
    PRODUCT_ULPS,
    assert_ops_out_resized_with_torchs_warning,
    assert_same,
    assert_same_error,
    same_outcome,
)
from torchgen.model import SchemaKind

import internals
from internals.aten import dispatcher

# Every foreach overload but the out= forms (tested on their own below).
FOREACH = sorted(name.split("::")[1] for name, op in dispatcher.operators.items()
                 if name.startswith("aten::_foreach_") and op.schema.kind() != SchemaKind.out)


def _lists(lib):
    """Two tensors of different layouts (a transposed matrix, a vector), values in (0.1, 0.9):
    inside the domain of every unary operator (acos, log, rsqrt, ...)."""
    return [lib.linspace(0.1, 0.9, 12).reshape(3, 4).t(), lib.linspace(0.85, 0.15, 3)]


def _arguments(lib, name):
    """The arguments of one overload, from its schema: a fresh list per ``Tensor[]``, a 0-dim
    tensor for a ``Tensor`` number (a 1-d one of two for addcmul's packed scalars), two numbers
    for a scalar list."""
    if name == "_foreach_mm":               # pairs of matrices that multiply
        return [[lib.linspace(0.1, 0.9, 12).reshape(3, 4).t(), lib.ones(2, 3)],
                [lib.linspace(0.9, 0.1, 6).reshape(3, 2), lib.linspace(0.1, 0.9, 15).reshape(3, 5)]]
    out = []
    for a in dispatcher.find(name).schema.arguments.flat_positional:
        kind = str(a.type).replace("(a!)", "")
        if a.default is not None:
            continue
        if kind == "Tensor[]":
            out.append(_lists(lib))
        elif kind == "Tensor":
            out.append(lib.tensor([0.5, 2.0]) if name.startswith("_foreach_addc") else lib.tensor(0.5))
        else:
            out.append([0.5, 2.0] if kind == "Scalar[]" else 0.5)
    return out


def _call(lib, name, args):
    """Through the Python name; through ``ops.aten`` for an operator torch binds no name to
    (``_foreach_copy``), whose list is compared as a tuple (torch's ``ops`` give a ``Tensor[]``
    as a list, internals' as a tuple)."""
    base, _, overload = name.partition(".")
    if hasattr(torch, base):
        return getattr(lib, base)(*args)
    return tuple(getattr(getattr(lib.ops.aten, base), overload or "default")(*args))


@pytest.mark.parametrize("name", FOREACH)
def test_every_overload_matches_torch(name):
    ours_args, theirs_args = _arguments(internals, name), _arguments(torch, name)
    ours, theirs = _call(internals, name, ours_args), _call(torch, name, theirs_args)
    if name.split(".")[0].endswith("_"):            # in place: the list given comes back, written
        assert ours is ours_args[0] and theirs is theirs_args[0]
    assert type(ours) is type(theirs) and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t, ulps=LIBM_ULPS)


def test_lists_of_mixed_dtypes_and_numbers_as_torch():
    def program(lib):
        ints, floats = lib.arange(3), lib.ones(2, 2)
        outs = (lib._foreach_add([ints, floats], 1), lib._foreach_add([ints, floats], 1.5),
                lib._foreach_div([ints, floats], [2, 4]), lib._foreach_pow(2, [ints, floats]),
                lib._foreach_norm([floats, floats.double()], 1, dtype=lib.float64),
                lib._foreach_add([floats], [lib.tensor(2.0)]),
                lib._foreach_add((floats, ints), (floats, ints), alpha=2))
        return [t for out in outs for t in out]
    for o, t in zip(program(internals), program(torch), strict=True):
        assert_same(o, t)


def test_max_powsum_copy_and_mm_as_torch():
    """The values and dtypes of each: max keeps the dtype (integers, bool, half) and NaN wins;
    powsum is ``sum(|x| ** ord)`` with no special ``ord`` (``0 ** 0`` counts), of the real dtype,
    after a cast to ``dtype``; the functional copy clones ``self``'s layout (an expanded tensor's
    clone is contiguous) and casts ``src`` into it; mm multiplies each pair."""
    def program(lib):
        x = lib.tensor([1.0, -5.0, 3.0, 0.0])
        outs = (lib._foreach_max([x, lib.arange(6).reshape(2, 3), lib.tensor([True, False]), lib.tensor(2.5).half(),
                                  lib.tensor([float("nan"), 1.0])]),
                *(lib._foreach_powsum([x, x.double(), x.half()], p) for p in (2, 3, 0, -1, 2.5, float("inf"))),
                lib._foreach_powsum([lib.tensor([1 + 2j]), lib.arange(3)], dtype=lib.float64),
                lib.ops.aten._foreach_copy([lib.zeros(2, 3).t(), lib.zeros(3)[None].expand(2, 3), lib.zeros(2).long()],
                                           [lib.ones(3, 2), lib.ones(3), lib.tensor([1.5, -2.5])]),
                lib._foreach_mm([lib.ones(2, 3), x.reshape(4, 1)], [lib.arange(12.0).reshape(3, 4), x.reshape(1, 4)]))
        return [t for out in outs for t in out]
    for o, t in zip(program(internals), program(torch), strict=True):
        assert_same(o, t, ulps=PRODUCT_ULPS)


def test_foreach_copy_has_no_python_name_as_torch():
    assert hasattr(internals, "_foreach_copy") is hasattr(torch, "_foreach_copy") is False
    assert list(internals.ops.aten._foreach_copy([], [])) == torch.ops.aten._foreach_copy([], []) == []


OUT_FORMS = {
    "max": lambda lib: (lambda out: lib.ops.aten._foreach_max.out([lib.tensor([1.0, 7.0]), lib.ones(2, 2)], out=out)
                        or out)([lib.empty(0), lib.empty(0)]),
    "powsum": lambda lib: (lambda out: lib.ops.aten._foreach_powsum.Scalar_out([lib.tensor([1.0, -7.0])], 3, out=out)
                           or out)([lib.empty(0)]),
}


@pytest.mark.parametrize("program", OUT_FORMS.values(), ids=OUT_FORMS)
def test_out_forms_as_torch(program):
    """torch's generated out= forms: each ``out`` resized to its result and written (its version
    moves), whether an input requires grad or not."""
    ours, theirs = program(internals), program(torch)
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
        assert o._version == t._version


def test_an_out_form_resizes_with_torchs_warning(capfd):
    assert_ops_out_resized_with_torchs_warning(
        lambda lib: (lambda out: lib.ops.aten._foreach_max.out([lib.ones(2, requires_grad=True)], out=out) or out[0])(
            [lib.empty(3)]), capfd)


ERRORS = {
    "lengths": lambda lib, a: lib._foreach_add([a], [a, a]),
    "empty": lambda lib, a: lib._foreach_add([], 1),
    "empty_lists": lambda lib, a: lib._foreach_mul([], []),
    "scalar_list": lambda lib, a: lib._foreach_mul([a], [1.0, 2.0]),
    "third_list": lambda lib, a: lib._foreach_addcmul([a], [a], [a, a]),
    "sizes": lambda lib, a: lib._foreach_add([a], [lib.ones(2)]),
    "not_0_dim": lambda lib, a: lib._foreach_mul([a], a),
    "packed_scalars": lambda lib, a: lib._foreach_addcdiv([a], [a], [a], lib.ones(2)),
    "packed_scalars_dim": lambda lib, a: lib._foreach_addcdiv([a], [a], [a], lib.tensor(1.0)),
    "cast": lambda lib, a: lib._foreach_add_([lib.arange(3)], 1.5),
    "norm_of_ints": lambda lib, a: lib._foreach_norm([lib.arange(3)]),
    "leaf": lambda lib, a: lib._foreach_add_([lib.ones(3, requires_grad=True)], 1),
    "leaf_list": lambda lib, a: lib._foreach_mul_([a, lib.ones(3, requires_grad=True)], [a, a]),
    "not_a_list": lambda lib, a: lib._foreach_add(a, 1),
    "max_of_empty": lambda lib, a: lib._foreach_max([a, lib.ones(2, 0)]),
    "max_of_empty_wanting_grad": lambda lib, a: lib._foreach_max([lib.ones(0, requires_grad=True)]),
    "max_of_no_tensor": lambda lib, a: lib._foreach_max([]),
    "max_of_complex": lambda lib, a: lib._foreach_max([lib.tensor([1j])]),
    "max_out_keyword": lambda lib, a: lib._foreach_max([a], out=[a]),
    "max_out_dtype": lambda lib, a: lib.ops.aten._foreach_max.out([a, lib.arange(3)], out=[lib.empty(()), a]),
    "powsum_of_ints": lambda lib, a: lib._foreach_powsum([lib.arange(3)]),
    "powsum_to_bool": lambda lib, a: lib._foreach_powsum([a], 2, dtype=lib.bool),
    "powsum_of_no_tensor": lambda lib, a: lib._foreach_powsum([]),
    "copy_sizes": lambda lib, a: lib.ops.aten._foreach_copy([a], [lib.ones(2)]),
    "mm_empty": lambda lib, a: lib._foreach_mm([], [lib.ones(2, 2)]),
    "mm_lengths": lambda lib, a: lib._foreach_mm([lib.ones(2, 2)], []),
    "mm_shapes": lambda lib, a: lib._foreach_mm([lib.ones(2, 3)], [lib.ones(2, 3)]),
    "mm_dtypes": lambda lib, a: lib._foreach_mm([lib.ones(2, 3)], [lib.ones(3, 2).double()]),
    "maximum_of_complex": lambda lib, a: lib._foreach_maximum([a.cfloat()], [a.cfloat()]),
    "maximum_of_complex_wanting_grad": lambda lib, a: lib._foreach_maximum([a.cfloat().requires_grad_()], 1.0),
    "minimum_of_complex_wanting_grad": lambda lib, a: lib._foreach_minimum([a.cfloat().requires_grad_()], [a]),
    # with a gradient recorded, every output of an operator with a formula must be differentiable
    "integer_output_wanting_grad": lambda lib, a: lib._foreach_add([lib.arange(2), lib.ones(2, requires_grad=True)], 1),
    "bool_output_wanting_grad": lambda lib, a: lib._foreach_max([lib.ones(2, requires_grad=True), lib.tensor([True])]),
    "integer_power_wanting_grad": lambda lib, a: lib._foreach_pow(2, [lib.ones(2, requires_grad=True), lib.arange(2)]),
}


@pytest.mark.parametrize("program", ERRORS.values(), ids=ERRORS)
def test_errors_as_torch(program):
    ours, theirs = assert_same_error(lambda: program(internals, internals.ones(3)),
                                     lambda: program(torch, torch.ones(3)))
    assert str(ours) == str(theirs)


# Autograd: (name, program) over a, b (leaves) and x (no grad).
GRADS = {
    "mul_list": lambda lib, a, b, x: lib._foreach_mul([a, b], [b, a]),
    "add_scalar": lambda lib, a, b, x: lib._foreach_add([a, b], 2.0),
    "add_list_alpha": lambda lib, a, b, x: lib._foreach_add([a, x], [b, b], alpha=2),
    "sub_scalar_list": lambda lib, a, b, x: lib._foreach_sub([a, b], [1, 2]),
    "div_list": lambda lib, a, b, x: lib._foreach_div([a, b], [b, a]),
    "exp": lambda lib, a, b, x: lib._foreach_exp([a, b]),
    "norm": lambda lib, a, b, x: lib._foreach_norm([a, b], 1),
    "maximum_ties": lambda lib, a, b, x: lib._foreach_maximum([a, b], -2.0),
    "maximum_list": lambda lib, a, b, x: lib._foreach_maximum([a, b], [b, a]),
    "minimum_scalar_list": lambda lib, a, b, x: lib._foreach_minimum([a, b], [3, -2.0]),
    "clamp_min_list": lambda lib, a, b, x: lib._foreach_clamp_min([a, b], [b, a]),
    "pow_scalar_and_tensor": lambda lib, a, b, x: lib._foreach_pow(2.0, [a, b]),
    "addcmul_scalar_list": lambda lib, a, b, x: lib._foreach_addcmul([a, b], [b, a], [a, x], [0.3, 0.2]),
    "lerp_list": lambda lib, a, b, x: lib._foreach_lerp([a, b], [b, a], [a, b]),
    "clone": lambda lib, a, b, x: lib._foreach_clone([a, b]),
    "in_place_on_outputs": lambda lib, a, b, x: lib._foreach_mul_([a * 1, b * 1], [b, a]),
    "max_ties": lambda lib, a, b, x: lib._foreach_max([a, x, b]),
    "mm": lambda lib, a, b, x: lib._foreach_mm([a[:, None], x[None], b[:, None]], [b[None], a[:, None], x[None]]),
}


def test_integer_outputs_without_a_formula_or_in_place_as_torch():
    """The refusal of integer outputs is the formula's: an operator without one (the functional
    copy) and an in-place loop leave the integer output without a node."""
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        outs = (lib.ops.aten._foreach_copy([a, lib.arange(2)], [lib.ones(2), lib.ones(2)]),
                lib._foreach_add_([a * 1, lib.arange(2)], 1), lib._foreach_max([lib.ones(2), lib.arange(2)]))
        return [(str(t.dtype).split(".")[1], None if t.grad_fn is None else t.grad_fn.name()) for out in outs
                for t in out]
    assert program(internals) == program(torch)


def _graph(lib, program):
    a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, -2.0, 4.0], requires_grad=True)
    outs = program(lib, a, b, lib.ones(3))
    fn = outs[0].grad_fn
    edges = [None if e is None else e.name() for e, _ in fn.next_functions]
    seen = ([t.grad_fn.name() for t in outs], type(fn).__name__, [t.grad_fn is fn for t in outs], edges)
    sum((i + 1) * t.sum() for i, t in enumerate(outs)).backward()
    return seen, a.grad, b.grad


@pytest.mark.parametrize("program", GRADS.values(), ids=GRADS)
def test_autograd_as_torch(program):
    ours, theirs = _graph(internals, program), _graph(torch, program)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:]):
        assert_same(o, t, ulps=LIBM_ULPS)


# In place on ys (two non-leaves made from a and b, which require grad), by a, b or numbers.
INPLACE_GRADS = {
    "maximum_list_ties": lambda lib, ys, a, b: lib._foreach_maximum_(ys, [b, a]),
    "minimum_list": lambda lib, ys, a, b: lib._foreach_minimum_(ys, [b.detach(), a]),
    "maximum_scalar": lambda lib, ys, a, b: lib._foreach_maximum_(ys, 0.5),
    "minimum_scalar_list": lambda lib, ys, a, b: lib._foreach_minimum_(ys, [0.5, 1.0]),
    "copy": lambda lib, ys, a, b: lib._foreach_copy_(ys, [b, a.detach()]),
    "addcmul_packed_scalars": lambda lib, ys, a, b: lib._foreach_addcmul_(ys, [a, b], [b, a], lib.tensor([1.0, 2.0])),
    "add_list": lambda lib, ys, a, b: lib._foreach_add_(ys, [b, a], alpha=2),
}


@pytest.mark.parametrize("program", INPLACE_GRADS.values(), ids=INPLACE_GRADS)
def test_in_place_autograd_as_torch(program):
    """The written tensors' nodes (the reference operator's for maximum_ and minimum_ by
    tensors, one that refuses where torch has no formula), their edges, then the gradients or
    the refusal."""
    def run(lib):
        a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = lib.tensor([0.5, -1.0, 3.0], requires_grad=True)
        ys = [a * 1, b * -2]
        program(lib, ys, a, b)
        seen = [(y.grad_fn.name(), [None if e is None else e.name() for e, _ in y.grad_fn.next_functions])
                for y in ys]
        try:
            sum((i + 1) * y.sum() for i, y in enumerate(ys)).backward()
        except RuntimeError as e:
            return seen, str(e)
        return seen, a.grad, b.grad
    ours, theirs = run(internals), run(torch)
    assert ours[0] == theirs[0] and len(ours) == len(theirs)
    if len(theirs) == 2:
        assert ours[1] == theirs[1]
    else:
        for o, t in zip(ours[1:], theirs[1:]):
            assert_same(o, t)


# Operators torch has no formula for, over a (requires grad) and x (does not).
NO_FORMULA = {
    "packed_scalars": lambda lib, a, x: lib._foreach_addcmul([x, a], [a, x], [a, a], lib.tensor([2.0, 1.0])),
    "powsum": lambda lib, a, x: lib._foreach_powsum([x, a, a * 2], 3),
    "copy": lambda lib, a, x: lib.ops.aten._foreach_copy([x, a], [a, x]),
}


@pytest.mark.parametrize("program", NO_FORMULA.values(), ids=NO_FORMULA)
def test_operators_without_a_formula_refuse_a_backward_as_torch(program):
    """One node that refuses, whose edges are the inputs that require grad only."""
    def run(lib):
        out = program(lib, lib.ones(3, requires_grad=True), lib.ones(3))
        fn = out[0].grad_fn
        edges = [None if e is None else e.name() for e, _ in fn.next_functions]
        seen = (fn.name(), type(fn).__name__, all(t.grad_fn is fn for t in out), edges)
        return seen, lambda: out[1].sum().backward()
    (ours, backward_ours), (theirs, backward_theirs) = run(internals), run(torch)
    assert ours == theirs
    errors = assert_same_error(backward_ours, backward_theirs)
    assert str(errors[0]) == str(errors[1])


def _seen_by_a_mode(lib, mode_class):
    class Log(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    seen, x, y = [], [lib.ones(2)], [lib.ones(2)]
    with Log():
        lib._foreach_add_(x, y, alpha=2)
        lib._foreach_norm(x)
    return seen


def test_a_mode_sees_the_foreach_operator_when_no_gradient_is_recorded():
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from internals.utils._python_dispatch import TorchDispatchMode
    assert _seen_by_a_mode(internals, TorchDispatchMode) == _seen_by_a_mode(torch, TorchMode) == [
        "aten._foreach_add_.List", "aten._foreach_norm.Scalar"]


@pytest.mark.parametrize("name", ["_foreach_exp", "_foreach_sigmoid", "_foreach_reciprocal", "_foreach_log1p",
                                  "exp", "asinh", "exp2", "sinc", "erf"])
def test_complex32_refused_with_torchs_kernel_name(name):
    """torch has no complex32 loop for these: its refusal names the CPU kernel (``exp_vml_cpu``,
    ``sigmoid_cpu``), and the foreach form hands each tensor to the same kernel."""
    import warnings

    def call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch's "ComplexHalf support is experimental"
            x = lib.ones(2, dtype=lib.complex32)
        fn = getattr(lib, name)
        return fn([x]) if name.startswith("_foreach") else fn(x)
    same_outcome(call)
