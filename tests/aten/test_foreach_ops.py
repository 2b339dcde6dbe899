"""The multi-tensor operators (``torch._foreach_*``) against torch: every overload's values, dtypes,
shapes and strides; the list checks and their errors; in-place forms returning the list given;
and autograd (one node per call, its name, its edges, the gradients)."""
import pytest
import torch
from helpers import LIBM_ULPS, assert_same, assert_same_error, same_outcome

import internals
from internals.aten import dispatcher

FOREACH = sorted(name.split("::")[1] for name in dispatcher.operators if name.startswith("aten::_foreach_"))


def _lists(lib):
    """Two tensors of different layouts (a transposed matrix, a vector), values in (0.1, 0.9):
    inside the domain of every unary operator (acos, log, rsqrt, ...)."""
    return [lib.linspace(0.1, 0.9, 12).reshape(3, 4).t(), lib.linspace(0.85, 0.15, 3)]


def _arguments(lib, name):
    """The arguments of one overload, from its schema: a fresh list per ``Tensor[]``, a 0-dim
    tensor for a ``Tensor`` number (a 1-d one of two for addcmul's packed scalars), two numbers
    for a scalar list."""
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
    base, _, _ = name.partition(".")
    return getattr(lib, base)(*args)


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
}


def _graph(lib, program):
    a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, -2.0, 4.0], requires_grad=True)
    outs = program(lib, a, b, lib.ones(3))
    fn = outs[0].grad_fn
    edges = [None if e is None else e.name() for e, _ in fn.next_functions]
    seen = ([t.grad_fn.name() for t in outs], [t.grad_fn is fn for t in outs], edges)
    sum((i + 1) * t.sum() for i, t in enumerate(outs)).backward()
    return seen, a.grad, b.grad


@pytest.mark.parametrize("program", GRADS.values(), ids=GRADS)
def test_autograd_as_torch(program):
    ours, theirs = _graph(internals, program), _graph(torch, program)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:]):
        assert_same(o, t, ulps=LIBM_ULPS)


def test_packed_scalars_refuse_a_backward_as_torch():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        out = lib._foreach_addcmul([a], [a], [a], lib.tensor([2.0]))
        return out[0].grad_fn.name(), lambda: out[0].sum().backward()
    (ours, backward_ours), (theirs, backward_theirs) = program(internals), program(torch)
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
