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
