"""``F.instance_norm`` (torch's CompositeImplicitAutograd ``instance_norm`` over ``batch_norm``)
and ``nn.InstanceNorm1d/2d/3d`` against torch: outputs, running statistics, node names, first
and second gradients, unbatched input, state dicts, the errors and warnings."""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, same_outcome

import internals


def _t(L, shape, seed, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)      # (flat, so that empty shapes survive)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 3), (2, 2, 3, 2, 2)])
def test_functional_output_statistics_and_gradients_match_torch(shape, affine, use_input_stats):
    def run(L):
        C = shape[1]
        x = _t(L, shape, 1, requires_grad=True)
        weight, bias = (_t(L, (C,), 2, requires_grad=True), _t(L, (C,), 3, requires_grad=True)) if affine else (None,
                                                                                                              None)
        mean, var = _t(L, (C,), 4), _t(L, (C,), 5).abs()
        out = L.nn.functional.instance_norm(x, mean, var, weight, bias, use_input_stats, momentum=0.3, eps=1e-3)
        leaves = [x] + ([weight, bias] if affine else [])
        grads = L.autograd.grad((out ** 3).sum(), leaves)
        return (out, mean, var, *grads), out.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-10, atol=1e-12)
    assert ours[1] == theirs[1]


def test_second_derivatives_match_torch():
    """batch_norm's backward is differentiable, so instance norm's is too."""
    def run(L):
        x, w = _t(L, (2, 3, 4), 6, requires_grad=True), _t(L, (3,), 7, requires_grad=True)
        out = L.nn.functional.instance_norm(x.tanh(), weight=w)
        g = L.autograd.grad((out ** 3).sum(), [x, w], create_graph=True)
        return (*g, *L.autograd.grad((g[0] ** 2).sum() + (g[1] ** 2).sum(), [x, w]))
    for o, t in zip(run(internals), run(torch)):
        assert_same(o, t, rtol=1e-9, atol=1e-11)


def test_noncontiguous_and_float32_inputs_match_torch():
    same_outcome(lambda L: L.nn.functional.instance_norm(_t(L, (3, 5, 4), 1).transpose(1, 2)), rtol=1e-12,
                 atol=1e-12)
    same_outcome(lambda L: L.nn.functional.instance_norm(_t(L, (2, 3, 4, 4), 2, "float32").to(
        memory_format=L.channels_last)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
def test_running_statistics_of_another_dtype_are_cast_to_the_input_as_torch(dtypes, use_input_stats):
    """torch casts the running statistics (not the weight) to the input's dtype before batch
    norm, and the updated means back to the statistics' dtype."""
    def run(L):
        x_dtype, stats_dtype = dtypes
        mean, var = _t(L, (3,), 4, stats_dtype), _t(L, (3,), 5, stats_dtype).abs()
        out = L.nn.functional.instance_norm(_t(L, (2, 3, 4), 1, x_dtype), mean, var, use_input_stats=use_input_stats)
        return out, mean, var
    for o, t in zip(run(internals), run(torch)):
        assert_same(o, t, rtol=1e-5, atol=1e-6)
    same_outcome(lambda L: L.nn.functional.instance_norm(_t(L, (2, 3, 4), 1, "float32"), weight=_t(L, (3,), 2)),
                 message=False)


BAD = {
    "one_spatial_element": lambda F, L: F.instance_norm(_t(L, (2, 3, 1), 1)),
    "no_running_stats_in_eval": lambda F, L: F.instance_norm(_t(L, (2, 3, 4), 1), use_input_stats=False),
    "weight_size": lambda F, L: F.instance_norm(_t(L, (2, 3, 4), 1), weight=_t(L, (2,), 2)),
    "running_mean_size": lambda F, L: F.instance_norm(_t(L, (2, 3, 4), 1), _t(L, (4,), 2), _t(L, (3,), 2)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_errors(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, L), message=False)


MODULES = {
    "InstanceNorm1d": (4,), "InstanceNorm2d": (3, 4), "InstanceNorm3d": (2, 3, 2),
}
SETTINGS = [{}, {"affine": True}, {"track_running_stats": True},
            {"affine": True, "track_running_stats": True, "momentum": None}]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name", list(MODULES))
def test_modules_match_torch_in_train_and_eval(name, batched, settings):
    def run(L):
        L.manual_seed(0)
        module = getattr(L.nn, name)(3, **settings)
        results = []
        for training in (True, True, False):
            module.train(training)
            x = _t(L, ((2,) if batched else ()) + (3,) + MODULES[name], len(results), "float32")
            results.append(module(x))
        return results, module.state_dict(), repr(module)
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-5, atol=1e-6)
    assert list(ours[1]) == list(theirs[1])
    for key in theirs[1]:
        assert_same(ours[1][key], theirs[1][key], rtol=1e-6, atol=1e-7)
    assert ours[2] == theirs[2]


def test_module_checks_and_warnings_match_torch():
    same_outcome(lambda L: L.nn.InstanceNorm2d(3)(_t(L, (2, 3, 4), 1)[None, None]))        # 5-d
    same_outcome(lambda L: L.nn.InstanceNorm1d(3, affine=True)(_t(L, (2, 4, 5), 1)))        # channels
    for L in (internals, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.nn.InstanceNorm1d(3)(_t(L, (2, 4, 5), 1))
        assert [str(w.message) for w in caught] == [
            "input's size at dim=1 does not match num_features. You can silence this warning by not passing in "
            "num_features, which is not used because affine=False"]


def test_state_dicts_cross_between_libraries_and_old_checkpoints_are_refused_as_torch():
    for tracked in (True, False):
        theirs = torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=tracked)
        ours = internals.nn.InstanceNorm2d(3, affine=True, track_running_stats=tracked)
        ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
        assert list(ours.state_dict()) == list(theirs.state_dict())

    def old_checkpoint(L):     # a plain dict (no version) holding running statistics
        L.nn.InstanceNorm1d(2).load_state_dict({"running_mean": L.zeros(2), "running_var": L.ones(2)})
    same_outcome(old_checkpoint)


def _sixteen_bit_case(L, seed, shape, dtype, stats_dtype, affine):
    """A shifted, scaled input (so that the statistics round), with running statistics and
    affine parameters drawn from the same seed."""
    g = np.random.default_rng(seed)
    x = g.standard_normal(shape) * g.uniform(0.1, 5) + g.uniform(-3, 3)
    C = shape[1]
    stats = [L.tensor(g.standard_normal(C)), L.tensor(g.uniform(0.1, 2, C))]
    params = [L.tensor(g.standard_normal(C)).to(getattr(L, dtype)) for _ in range(2)] if affine else [None, None]
    return (L.tensor(x).to(getattr(L, dtype)), *(s.to(getattr(L, stats_dtype)) for s in stats), *params)


# Planes under 16 elements: torch's float sums then run in one order on every CPU (wider planes
# go through its vector lanes, whose width follows the CPU).
SIXTEEN_BIT_SHAPES = [(2, 3, 5), (3, 4, 7), (1, 2, 3, 3), (4, 6, 2, 2)]


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sixteen_bit_input_with_float64_statistics_is_torch_bit_for_bit(dtype, use_input_stats, affine):
    """torch casts float64 running statistics to the 16-bit input's dtype, so batch norm runs its
    16-bit kernel throughout: statistics stored in that dtype, output x·alpha + beta in float (fused
    in inference). Dtype, strides and the updated statistics are torch's to the bit, and so is the
    output in training; in inference it is within an ulp (torch's fused or separate rounding, by CPU)."""
    for seed, shape in enumerate(SIXTEEN_BIT_SHAPES * 3):
        if dtype == "float16" and affine and use_input_stats:
            break       # float16 with affine parameters in training stays within an ulp (below)
        got, want = ([*_sixteen_bit_case(L, seed, shape, dtype, "float64", affine)] for L in (internals, torch))
        out = internals.nn.functional.instance_norm(got[0], got[1], got[2], got[3], got[4], use_input_stats)
        ref = torch.nn.functional.instance_norm(want[0], want[1], want[2], want[3], want[4], use_input_stats)
        # in inference torch's vector kernel fuses x·alpha + beta into one rounding where the CPU has
        # FMA, and its generic kernel rounds twice: the output is within an ulp of either
        if use_input_stats:
            assert_same(out, ref, rtol=0, atol=0)
        else:
            assert_same(out, ref, ulps=1)
        for o, t in ((got[1], want[1]), (got[2], want[2])):
            assert_same(o, t, rtol=0, atol=0)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_float16_affine_and_float32_statistics_stay_within_an_ulp(use_input_stats):
    """What is not bit for bit: float16 with affine parameters while training, and 16-bit input beside
    float32 statistics (torch's float sums run in its own order): one unit in the last place."""
    for dtype, stats_dtype, affine in (("float16", "float64", True), ("bfloat16", "float32", False)):
        for seed, shape in enumerate(SIXTEEN_BIT_SHAPES):
            got, want = ([*_sixteen_bit_case(L, seed, shape, dtype, stats_dtype, affine)] for L in (internals, torch))
            if stats_dtype == "float32":
                out = internals.native_batch_norm(*got[:1], None, None, *got[1:3], use_input_stats, 0.1, 1e-5)
                ref = torch.native_batch_norm(*want[:1], None, None, *want[1:3], use_input_stats, 0.1, 1e-5)
            else:
                out = [internals.nn.functional.instance_norm(*got, use_input_stats=use_input_stats)]
                ref = [torch.nn.functional.instance_norm(*want, use_input_stats=use_input_stats)]
            for o, t in zip([*out, got[1], got[2]], [*ref, want[1], want[2]]):
                ulp = torch.finfo(t.dtype).eps * t.abs().max().item() if t.numel() else 0
                assert_same(o, t, rtol=0, atol=ulp)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_batch_norm_saves_sixteen_bit_statistics_in_their_dtype(dtype):
    """native_batch_norm of a 16-bit input with 16-bit (or no) running statistics returns its
    saved mean and 1/std in that dtype, as torch's 16-bit kernel stores them; beside float32
    statistics they are float32."""
    for stats in (dtype, None, "float32"):
        got, want = ([*_sixteen_bit_case(L, 7, (3, 4, 7), dtype, stats or dtype, False)] for L in (internals, torch))
        if stats is None:
            got[1:3] = want[1:3] = [None, None]
        out = internals.native_batch_norm(got[0], None, None, got[1], got[2], True, 0.1, 1e-5)
        ref = torch.native_batch_norm(want[0], None, None, want[1], want[2], True, 0.1, 1e-5)
        assert [str(t.dtype).split(".")[-1] for t in out] == [str(t.dtype).split(".")[-1] for t in ref]
        if stats != "float32":
            for o, t in zip(out, ref):
                assert_same(o, t, rtol=0, atol=0)
