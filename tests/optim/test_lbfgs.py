"""LBFGS against torch's: three ``step(closure)`` calls on a small non-quadratic loss, with a fixed
step and with the strong Wolfe line search, a history shorter than the run and a ``max_eval`` cap,
in float32 and float64. The iteration and evaluation counts and the state's keys are torch's
exactly; the parameters and the history within a stated tolerance: each iteration's dot products
and the loss's matrix product sum in an order the CPU chooses, and a quasi-Newton step carries
those roundings on (the widest gap seen was ~50 ulps of the largest value, so 512 is allowed).
The history is compared within 4096 ulps of its largest value, each list of scalars (1/yᵀs, the
two-loop's coefficients) as one vector: the later coefficients are dot products with a direction
that shrinks as the iteration converges, whose own relative rounding grows with it (~300 ulps of
the largest were seen).
Also: the state dict (lists of tensors, floats and counts) loads into torch's LBFGS and back; a
complex parameter is optimised as its real pairs; bad arguments fail with torch's classes."""
import warnings

import pytest
import torch
from helpers import assert_same_error, assert_within_ulps_of_largest, config_id, twin_params

import internals

ULPS = 512
HISTORY_ULPS = 4096
CONFIGS = [dict(max_iter=5), dict(max_iter=4, history_size=2, line_search_fn="strong_wolfe"),
           dict(lr=0.5, max_iter=6, max_eval=8)]


def make_closure(lib, opt, params):
    w, v = params
    target = lib.arange(3.0, dtype=w.dtype)

    def closure():
        opt.zero_grad()
        loss = ((w @ v - target) ** 2).sum() + 0.1 * (w ** 4).sum() + (v ** 2).sum()
        loss.backward()
        return loss
    return closure


def run(lib, params, steps=3, opt=None, **config):
    opt = opt or lib.optim.LBFGS(params, **config)
    closure = make_closure(lib, opt, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch warns as float() reads a loss that requires grad
        losses = [opt.step(closure).item() for _ in range(steps)]
    return opt, losses


def assert_close(ours, theirs, eps):
    """A state entry: tensors within HISTORY_ULPS of their largest value, lists of scalars as one
    vector, lists of vectors item by item,
    floats within the same relative tolerance (``eps`` the parameters' machine epsilon), counts
    and None equal."""
    if isinstance(theirs, torch.Tensor):
        assert_within_ulps_of_largest(ours, theirs, HISTORY_ULPS)
    elif isinstance(theirs, list) and all(t is None or t.dim() == 0 for t in theirs):
        assert [o is None for o in ours] == [t is None for t in theirs]
        if any(t is not None for t in theirs):
            assert_close(internals.stack([o for o in ours if o is not None]),
                         torch.stack([t for t in theirs if t is not None]), eps)
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_close(o, t, eps)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=HISTORY_ULPS * eps)
    else:
        assert type(ours) is type(theirs) and ours == theirs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_lbfgs_steps_as_torch(config, dtype):
    ours, theirs = twin_params(dtype=dtype)
    opt_ours, losses_ours = run(internals, ours, **config)
    opt_theirs, losses_theirs = run(torch, theirs, **config)
    assert losses_ours == pytest.approx(losses_theirs, rel=1e-5)
    for o, t in zip(ours, theirs):
        assert_within_ulps_of_largest(o, t, ULPS)
    state_ours, state_theirs = opt_ours.state[ours[0]], opt_theirs.state[theirs[0]]
    assert list(state_ours) == list(state_theirs)
    assert opt_ours.state.keys() == {ours[0]}           # the history lives with the first parameter
    for key, value in state_theirs.items():
        assert_close(state_ours[key], value, torch.finfo(dtype).eps)


def test_state_dict_round_trips_through_torch():
    """Two steps here, the state dict (history lists, floats, counts) loaded into torch's LBFGS
    for two steps, and back for one: torch's uninterrupted five steps, within the tolerance."""
    config = CONFIGS[1]
    reference = twin_params()[1]
    run(torch, reference, steps=5, **config)
    ours, theirs = twin_params()
    opt, _ = run(internals, ours, steps=2, **config)
    for lib, params, other, convert in ((torch, theirs, ours, lambda t: t.to_torch()),
                                        (internals, ours, theirs, internals.from_torch)):
        with lib.no_grad():
            for p, q in zip(params, other):
                p.copy_(convert(q.detach()))
        saved = opt.state_dict()
        saved = {"param_groups": saved["param_groups"],
                 "state": {i: {k: _converted(v, convert) for k, v in s.items()} for i, s in saved["state"].items()}}
        opt = lib.optim.LBFGS(params, lr=12.5)
        opt.load_state_dict(saved)
        assert opt.param_groups[0]["lr"] == 1
        run(lib, params, steps=2 if lib is torch else 1, opt=opt)
    for o, r in zip(ours, reference):
        assert_within_ulps_of_largest(o, r, ULPS)


def _converted(value, convert):
    if isinstance(value, list):
        return [_converted(v, convert) for v in value]
    return convert(value) if isinstance(value, (torch.Tensor, internals.Tensor)) else value


def test_complex_parameter_is_optimised_as_real_pairs():
    results = []
    for lib in (internals, torch):
        p = lib.nn.Parameter(lib.tensor([1 + 2j, -0.5 + 0.25j], dtype=lib.complex128))
        opt = lib.optim.LBFGS([p], max_iter=4)

        def closure(p=p, opt=opt):
            opt.zero_grad()
            loss = (p * p.conj()).real.sum() + (p.real ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)
        results.append(p.detach())
    assert_within_ulps_of_largest(results[0], results[1], ULPS)


BAD = {
    "negative_lr": lambda lib, p: lib.optim.LBFGS(p, lr=-1.0),
    "two_element_lr": lambda lib, p: lib.optim.LBFGS(p, lr=lib.tensor([0.1, 0.2])),
    "two_groups": lambda lib, p: lib.optim.LBFGS([{"params": p[:1]}, {"params": p[1:]}]),
    "unknown_line_search": lambda lib, p: run(lib, p, line_search_fn="backtracking"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_arguments_raise_torch_classes(name):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: BAD[name](internals, ours), lambda: BAD[name](torch, theirs))
    assert str(err_ours) == str(err_theirs)
