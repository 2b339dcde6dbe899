"""``optim.swa_utils`` against torch: an averaged model (the SWA mean, an EMA by list or by tensor,
with and without its buffers averaged) over a few SGD steps under SWALR, its batch-norm statistics
recomputed by ``update_bn``; SWALR's rates (cosine, linear, no annealing, an lr changed by hand) and
its state dict; the refusals. The weights come from training steps whose products and batch-norm
sums round on the CPU's own path, so the averages are compared within 64 ulps of each tensor's
largest value (8 were seen); the schedules are Python floats, compared with ``==``."""
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error, assert_within_ulps_of_largest

import internals

ULPS = 64


def _models():
    internals.manual_seed(0)
    ours = internals.nn.Sequential(internals.nn.Linear(3, 4), internals.nn.BatchNorm1d(4), internals.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    theirs.load_state_dict({k: v.to_torch() for k, v in ours.state_dict().items()})
    return ours, theirs


AVERAGES = {
    "swa": lambda L: {},
    "ema_by_list": lambda L: dict(multi_avg_fn=L.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
    "ema_by_tensor_with_buffers": lambda L: dict(avg_fn=L.optim.swa_utils.get_ema_avg_fn(0.8), use_buffers=True),
    "swa_by_list": lambda L: dict(multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn()),
}


@pytest.mark.parametrize("average", AVERAGES)
def test_averaged_model_and_update_bn_follow_torch(average):
    results = []
    for L, model in zip((internals, torch), _models()):
        averaged = L.optim.swa_utils.AveragedModel(model, **AVERAGES[average](L))
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        swa = L.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        x = L.arange(24.0).reshape(8, 3) / 10
        for _ in range(4):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
            swa.step()
            averaged.update_parameters(model)
        L.optim.swa_utils.update_bn([x[:4], (x[4:], 0)], averaged)
        results.append((averaged.state_dict(), averaged(x).detach(), swa.get_last_lr()))
    (sd_ours, out_ours, lr_ours), (sd_theirs, out_theirs, lr_theirs) = results
    assert list(sd_ours) == list(sd_theirs)
    for key, value in sd_theirs.items():
        if value.is_floating_point():
            assert_within_ulps_of_largest(sd_ours[key], value, ULPS)
        else:                   # the count of averaged models, the batch norm's batch count
            assert_same(sd_ours[key], value)
    assert_within_ulps_of_largest(out_ours, out_theirs, ULPS)
    assert lr_ours == lr_theirs


SCHEDULES = [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=4, anneal_strategy="linear"),
             dict(swa_lr=0.01, anneal_epochs=0)]


@pytest.mark.parametrize("config", SCHEDULES, ids=["cos", "linear_per_group", "no_anneal"])
def test_swalr_schedule_and_state_dict_equal_torchs(config):
    def run(L):
        opt = L.optim.SGD([{"params": [L.nn.Parameter(L.zeros(1))], "lr": lr} for lr in (0.1, 0.3)], lr=1.0)
        sched = L.optim.swa_utils.SWALR(opt, **config)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(12):
                opt.step()
                if i == 2:
                    opt.param_groups[1]["lr"] = 0.25     # by hand: the annealing carries on from it
                sched.step()
                lrs.append(sched.get_last_lr())
        state = sched.state_dict()
        fresh = L.optim.swa_utils.SWALR(opt, swa_lr=0.5)
        fresh.load_state_dict(state)
        fresh.step()
        return lrs, fresh.get_last_lr(), sorted(state)
    assert run(internals) == run(torch)


BAD = {
    "ema_decay": lambda L: L.optim.swa_utils.get_ema_avg_fn(1.5),
    "ema_multi_decay": lambda L: L.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
    "two_average_functions": lambda L: L.optim.swa_utils.AveragedModel(
        L.nn.Linear(2, 2), avg_fn=L.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn()),
    "anneal_strategy": lambda L: L.optim.swa_utils.SWALR(L.optim.SGD(L.nn.Linear(2, 2).parameters()), 0.1,
                                                         anneal_strategy="exp"),
    "anneal_epochs": lambda L: L.optim.swa_utils.SWALR(L.optim.SGD(L.nn.Linear(2, 2).parameters()), 0.1,
                                                       anneal_epochs=-1),
    "swa_lr_count": lambda L: L.optim.swa_utils.SWALR(L.optim.SGD(L.nn.Linear(2, 2).parameters()), [0.1, 0.2]),
}


@pytest.mark.parametrize("name", BAD)
def test_refusals_equal_torchs(name):
    err_ours, err_theirs = assert_same_error(lambda: BAD[name](internals), lambda: BAD[name](torch))
    assert str(err_ours) == str(err_theirs)
