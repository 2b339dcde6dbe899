"""``GradScaler`` against torch's: the scale it multiplies by, the gradients it divides back
(by ``1 / scale`` rounded to float32, as torch's), the steps it skips after an inf or NaN, how the
scale backs off and grows, its state dict, and its errors. (A whole training run under it is one
of the programs in ``tests/test_tutorials_beyond_basics.py``.)"""
import math

import pytest
import torch
from helpers import assert_prints_alike, same_error

import internals

SCHEDULE = """
import math
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))
opt = torch.optim.SGD([w], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=3.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=2)
for step, poison in enumerate([None, None, math.inf, None, math.nan, None, None, None]):
    loss = (w * torch.tensor([1e-3, 2.0, 3.0])).sum()
    opt.zero_grad()
    scaled = scaler.scale(loss)
    (scaled if poison is None else scaled * poison).backward()
    print(step, scaled.item(), scaler.step(opt), w.grad.tolist(), w.tolist())
    scaler.update()
    print(scaler.get_scale(), scaler._get_growth_tracker(), scaler.state_dict())
print(scaler.scale([loss, (loss, loss * 2)]))
"""


def test_scaling_skipping_backing_off_and_growing_match_torch():
    assert_prints_alike(SCHEDULE)


def _scaler(lib, **kwargs):
    return lib.amp.GradScaler("cpu", **kwargs)


def _stepped(lib):
    """A scaler and an optimizer after one full step of a one-parameter model."""
    w = lib.nn.Parameter(lib.ones(2))
    opt, scaler = lib.optim.SGD([w], lr=0.1), _scaler(lib)
    scaler.scale(w.sum()).backward()
    return scaler, opt, w


ERRORS = {
    "unscale twice": lambda lib: [s.unscale_(o) for s, o, _ in [_stepped(lib)] for _ in range(2)],
    "unscale after step": lambda lib: [(s.step(o), s.unscale_(o)) for s, o, _ in [_stepped(lib)]],
    "step twice": lambda lib: [(s.step(o), s.step(o)) for s, o, _ in [_stepped(lib)]],
    "closure": lambda lib: [s.step(o, closure=lambda: None) for s, o, _ in [_stepped(lib)]],
    "update without a step": lambda lib: [(s.unscale_(o), s.update(), s.update()) for s, o, _ in [_stepped(lib)]],
    "step before scale": lambda lib: _scaler(lib).step(lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)),
    "growth factor": lambda lib: _scaler(lib, growth_factor=1.0),
    "backoff factor": lambda lib: _scaler(lib, backoff_factor=1.0),
    "empty state": lambda lib: _scaler(lib).load_state_dict({}),
    "fp16 gradients": lambda lib: [(setattr(w, "grad", w.grad.half()), s.unscale_(o)) for s, o, w in [_stepped(lib)]],
    "not a tensor": lambda lib: _scaler(lib).scale(3.0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    same_error(ERRORS[name])


def test_disabled_scaler_passes_through():
    for lib in (torch, internals):
        scaler = _scaler(lib, enabled=False)
        loss = lib.ones(())
        assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
        w = lib.nn.Parameter(lib.ones(2))
        w.grad = lib.full((2,), math.inf)
        scaler.step(lib.optim.SGD([w], lr=1.0))        # no inf check when disabled: the step runs
        assert math.isinf(w[0].item())
