"""``F.max_pool1d`` (and ``max_pool1d_with_indices``), ``F.avg_pool1d``, ``F.adaptive_avg_pool1d`` and
their modules against torch: each is a CompositeImplicitAutograd operator over its 2-d operator with a
height of one (``Pooling.cpp``, ``MaxPooling.cpp``), so values, indices, layouts, dtypes, the node
names of both levels, first and second gradients and the errors all follow torch's."""
import numpy as np
import pytest
import torch
from helpers import assert_fake_matches_real, assert_same, same_outcome

import internals


def _t(L, shape, seed=1, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


CALLS = {
    "max": lambda F, x: F.max_pool1d(x, 3),
    "max_stride_pad_dilation": lambda F, x: F.max_pool1d(x, 2, stride=1, padding=1, dilation=2),
    "max_ceil": lambda F, x: F.max_pool1d(x, 2, ceil_mode=True),
    "max_indices": lambda F, x: F.max_pool1d(x, 3, 2, return_indices=True)[0],
    "avg": lambda F, x: F.avg_pool1d(x, 3),
    "avg_pad_exclude": lambda F, x: F.avg_pool1d(x, 3, 2, padding=1, count_include_pad=False),
    "avg_ceil": lambda F, x: F.avg_pool1d(x, 2, ceil_mode=True),
    "adaptive_avg": lambda F, x: F.adaptive_avg_pool1d(x, 4),
    "adaptive_avg_one": lambda F, x: F.adaptive_avg_pool1d(x, 1),       # a mean, as in 2-d
    "adaptive_avg_grow": lambda F, x: F.adaptive_avg_pool1d(x, 11),
}
SHAPES = {"batched": (2, 3, 9), "unbatched": (3, 9)}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("name", list(CALLS))
def test_values_nodes_and_gradients_twice_match_torch(name, shape):
    def run(L):
        x = _t(L, SHAPES[shape], requires_grad=True)
        y = CALLS[name](L.nn.functional, x * 1.5)
        nodes = (y.grad_fn.name(), [n[0].name() for n in y.grad_fn.next_functions if n[0] is not None])
        g, = L.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x)
        return y, g, gg, nodes
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, ulps=4)           # the averages' sums and divisions: ulps, not bits
    assert ours[3] == theirs[3]


def test_indices_count_positions_along_the_length():
    def run(L):
        return L.nn.functional.max_pool1d(_t(L, (2, 3, 10)), 3, 2, 1, return_indices=True)
    (out, idx), (tout, tidx) = run(internals), run(torch)
    assert_same(out, tout, ulps=0)
    assert_same(idx, tidx, ulps=0)


@pytest.mark.parametrize("view", ["contiguous", "transposed", "strided"])
def test_max_pool1d_without_grad_is_laid_out_as_torchs_own_loop(view):
    """With no gradient wanted, torch's CPU ``max_pool1d`` writes a fresh contiguous output; with
    one it is ``max_pool2d_with_indices``'s, which keeps a channels-last-like layout."""
    views = {"contiguous": lambda x: x, "transposed": lambda x: x.transpose(1, 2), "strided": lambda x: x[:, :, ::2]}

    def run(L, grad):
        x = views[view](_t(L, (2, 6, 8), requires_grad=grad))
        return L.nn.functional.max_pool1d(x, 2).detach()
    for grad in (False, True):
        assert_same(run(internals, grad), run(torch, grad), ulps=0)


def test_modules_match_torch_and_print_alike():
    x = _t(torch, (2, 3, 9))
    pairs = [(internals.nn.MaxPool1d(3, 2, 1), torch.nn.MaxPool1d(3, 2, 1)),
             (internals.nn.MaxPool1d(2, return_indices=True), torch.nn.MaxPool1d(2, return_indices=True)),
             (internals.nn.AvgPool1d(3, padding=1, count_include_pad=False),
              torch.nn.AvgPool1d(3, padding=1, count_include_pad=False)),
             (internals.nn.AdaptiveAvgPool1d(4), torch.nn.AdaptiveAvgPool1d(4))]
    for ours, theirs in pairs:
        got, want = ours(internals.from_torch(x)), theirs(x)
        if isinstance(want, tuple):
            for g, w in zip(got, want, strict=True):
                assert_same(g, w, ulps=0)
        else:
            assert_same(got, want, ulps=4)
        assert repr(ours) == repr(theirs)


def test_the_torch_namespace_has_the_operators():
    x = _t(torch, (2, 3, 9))
    assert_same(internals.max_pool1d(internals.from_torch(x), [3]), torch.max_pool1d(x, [3]), ulps=0)
    for o, t in zip(internals.max_pool1d_with_indices(internals.from_torch(x), [2]),
                    torch.max_pool1d_with_indices(x, [2]), strict=True):
        assert_same(o, t, ulps=0)
    assert_same(internals.avg_pool1d(internals.from_torch(x), [3]), torch.avg_pool1d(x, [3]), ulps=4)
    assert_same(internals.adaptive_avg_pool1d(internals.from_torch(x), [5]), torch.adaptive_avg_pool1d(x, [5]),
                ulps=4)


ERRORS = {
    "max_4d": lambda F, x: F.max_pool1d(x.unsqueeze(0), 2),
    "max_4d_grad": lambda F, x: F.max_pool1d(x.unsqueeze(0).requires_grad_(), 2),
    "max_1d": lambda F, x: F.max_pool1d(x[0, 0], 2),
    "max_two_sizes": lambda F, x: F.max_pool1d(x, (2, 2), return_indices=True),
    "max_kernel_zero": lambda F, x: F.max_pool1d(x, 0, return_indices=True),
    "max_pad_too_big": lambda F, x: F.max_pool1d(x, 2, padding=2, return_indices=True),
    "max_kernel_too_big": lambda F, x: F.max_pool1d(x, 12, return_indices=True),
    "avg_4d": lambda F, x: F.avg_pool1d(x.unsqueeze(0), 2),
    "avg_two_sizes": lambda F, x: F.avg_pool1d(x, (2, 2)),
    "avg_pad_too_big": lambda F, x: F.avg_pool1d(x, 2, padding=2),
    "adaptive_1d": lambda F, x: F.adaptive_avg_pool1d(x[0, 0], 2),
    "adaptive_two_sizes": lambda F, x: F.adaptive_avg_pool1d(x, (2, 2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_have_torchs_class(name):
    same_outcome(lambda L: ERRORS[name](L.nn.functional, _t(L, (2, 3, 9))), message=False)


@pytest.mark.parametrize("call", [
    "F.max_pool1d(x, 2, padding=2)", "F.max_pool1d(x.requires_grad_(), 2, padding=2)", "F.max_pool1d(x, 0)",
    "F.max_pool1d(x, 2, stride=0)", "F.max_pool1d(x, 2, padding=-1)", "F.max_pool1d(x, 3, padding=1, dilation=0)",
    "F.max_pool1d(x, (2, 2))", "F.max_pool1d(x, 2, stride=(1, 1))", "F.max_pool1d(x, 2, padding=(0, 0))",
    "F.max_pool1d(x, 2, dilation=(1, 1))", "F.max_pool1d(x[..., :1], 3, padding=1, dilation=2)",
    "F.max_pool1d(x[0, 0], 2)", "F.max_pool1d(x[:, :0], 2)", "F.max_pool1d(x[:0], 2)",
    "F.max_pool1d(x, 3, padding=1, dilation=4)"])
def test_max_pool1d_checks_its_arguments_as_torch(call):
    """max_pool1d (without indices) checks its arguments itself before either of its paths,
    with messages that name max_pool1d(); torch's messages, word for word."""
    same_outcome(lambda L: eval(call, {"F": L.nn.functional, "x": _t(L, (2, 3, 9))}))


@pytest.mark.parametrize("name", ["max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d"])
def test_fake_tensors_get_the_real_layout(name):
    args = {"max_pool1d": ([3], [2]), "max_pool1d_with_indices": ([3], [2]), "avg_pool1d": ([3], [2]),
            "adaptive_avg_pool1d": ([4],)}[name]

    def program(L, x):
        # a fake tensor is subclass-like, so torch's max_pool1d takes its with-indices road, whose
        # layout differs from the no-grad loop's for a transposed input: that one gets a plain input
        return getattr(L.ops.aten, name)(x if name == "max_pool1d" else x.transpose(1, 2), *args)
    assert_fake_matches_real(program, lambda: (internals.arange(2 * 9 * 3.).reshape(2, 9, 3),))
