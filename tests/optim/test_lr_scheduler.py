"""Differential tests of ``optim.lr_scheduler`` against torch: every scheduler of torch's ``__all__``.

Each test drives the same optimizer and schedule in both libraries and compares the learning
rates (and the momentums that CyclicLR and OneCycleLR move) with ``==``: the schedulers are plain
Python float formulas, evaluated in torch's order, so they agree bit for bit on every machine.
"""
import pickle
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals


def make_optimizer(lib, kind="sgd", lrs=(0.1, 0.05)):
    """An optimizer with one parameter group per entry of ``lrs``."""
    groups = [{"params": [lib.nn.Parameter(lib.zeros(2))], "lr": lr} for lr in lrs]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=1.0)
    if kind != "sgd":
        return getattr(lib.optim, kind)(groups, lr=1.0)
    return lib.optim.SGD(groups, lr=1.0, momentum=0.9)


def hyper(opt):
    """What a scheduler writes into the groups: lr, momentum, betas."""
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]


class Halve:
    """A callable object: its ``__dict__`` is what LambdaLR's state_dict saves."""

    def __init__(self, k=0.5):
        self.k = k

    def __call__(self, epoch):
        return self.k ** epoch


SCHEDULERS = {
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda epoch: 0.95 ** epoch),
    "LambdaLR-object": lambda m, o: m.LambdaLR(o, [Halve(), lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda epoch: 0.97),
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.3),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.7),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.3, total_iters=6),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=17),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=23, power=1.7),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=9, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=1e-4),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4, step_size_down=7),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.97),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[0.3, 0.1], total_steps=60),
    "OneCycleLR-three-phase-linear": lambda m, o: m.OneCycleLR(o, max_lr=0.2, epochs=6, steps_per_epoch=10,
                                                               three_phase=True, anneal_strategy="linear"),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.2, total_iters=5), m.ExponentialLR(o, gamma=0.9),
            m.CosineAnnealingLR(o, T_max=11)], milestones=[5, 20]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.95)]),
}
ADAM_SCHEDULERS = ("CyclicLR", "OneCycleLR")       # these move Adam's beta1 in place of momentum


def drive(make, lib, kind="sgd", steps=60, edit_at=None):
    """Hyper-parameters after construction and after each (optimizer.step, scheduler.step) pair."""
    opt = make_optimizer(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)
    seq = [(sched.get_last_lr(), hyper(opt))]
    for i in range(steps):
        opt.step()
        if i == edit_at:
            opt.param_groups[0]["lr"] /= 2
        sched.step()
        seq.append((sched.get_last_lr(), hyper(opt)))
    return seq


@pytest.mark.parametrize("name", SCHEDULERS)
def test_schedule_equals_torch_exactly(name):
    assert drive(SCHEDULERS[name], internals) == drive(SCHEDULERS[name], torch)


@pytest.mark.parametrize("name", ADAM_SCHEDULERS)
def test_cycles_move_adam_beta1_as_torch(name):
    assert drive(SCHEDULERS[name], internals, "adam") == drive(SCHEDULERS[name], torch, "adam")


@pytest.mark.parametrize("kind", ["Adamax", "NAdam", "RAdam"])
@pytest.mark.parametrize("name", ADAM_SCHEDULERS)
def test_cycles_move_beta1_of_the_other_adams_as_torch(name, kind):
    assert drive(SCHEDULERS[name], internals, kind, steps=12) == drive(SCHEDULERS[name], torch, kind, steps=12)


@pytest.mark.parametrize("kind", ["ASGD", "Adafactor"])
@pytest.mark.parametrize("name", ADAM_SCHEDULERS)
def test_cycling_momentum_of_an_optimizer_without_one_fails_as_torch(name, kind):
    err_ours, err_theirs = assert_same_error(lambda: drive(SCHEDULERS[name], internals, kind, steps=1),
                                             lambda: drive(SCHEDULERS[name], torch, kind, steps=1))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("kind", ["Adamax", "NAdam", "RAdam", "ASGD", "Adafactor"])
def test_a_schedule_steers_the_new_optimizers_as_torch(kind):
    """Steps with gradients under OneCycleLR (which moves beta1 where the optimizer has betas):
    the parameters follow torch's."""
    results = []
    for lib in (internals, torch):
        p = lib.nn.Parameter(lib.arange(6.0).reshape(2, 3) / 5)
        opt = getattr(lib.optim, kind)([p], lr=0.1)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=6,
                                                  cycle_momentum=kind not in ("ASGD", "Adafactor"))
        for k in range(5):
            p.grad = lib.ones(2, 3) * (k - 2) + p.detach()
            opt.step()
            sched.step()
        results.append(p.detach())
    assert_same(results[0], results[1], ulps=4)     # Adafactor's norms: a few ulps; the others exact


@pytest.mark.parametrize("name", ["MultiplicativeLR", "MultiStepLR", "LinearLR", "ExponentialLR",
                                  "PolynomialLR", "SequentialLR", "ChainedScheduler"])
def test_chainable_schedules_carry_a_manual_lr_change(name):
    """Recursive schedulers compute from the group's current lr, so a change by hand carries on."""
    assert drive(SCHEDULERS[name], internals, edit_at=10) == drive(SCHEDULERS[name], torch, edit_at=10)


def test_cyclic_lr_without_momentum_and_with_a_custom_scale():
    def make(m, o):
        return m.CyclicLR(o, 0.001, 0.01, step_size_up=3, scale_fn=lambda x: 0.9 ** x, scale_mode="iterations",
                          cycle_momentum=False)
    assert drive(make, internals) == drive(make, torch)


@pytest.mark.parametrize("config", [dict(), dict(mode="max", threshold_mode="abs", patience=1, cooldown=2),
                                    dict(factor=0.5, patience=2, min_lr=[0.02, 0.001], eps=1e-3)],
                         ids=["defaults", "max-abs-cooldown", "min_lr-per-group"])
def test_reduce_on_plateau_equals_torch(config):
    metrics = [1.0, 0.9, 0.95, 0.91, 0.9, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.8, 0.85, 0.9] * 3

    def run(lib):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **config)
        seq = [sched.get_last_lr()]
        for value in metrics:
            opt.step()
            sched.step(value)
            seq.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
        return seq
    assert run(internals) == run(torch)


CLOSED_FORMS = ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR",
                "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "LambdaLR"]


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_step_with_epoch_equals_torch(name):
    """``step(epoch)`` jumps with the closed form where torch has one, and warns where torch does
    (not CosineAnnealingWarmRestarts, whose epoch argument is not deprecated)."""
    def run(lib):
        opt = make_optimizer(lib)
        sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
        seq = []
        for epoch in (3, 4, 11, 2, 30, 6):
            opt.step()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sched.step(epoch)
            seq.append((sched.get_last_lr(), [str(w.message).split(" was ")[0] for w in caught]))
        return seq
    ours = run(internals)
    assert ours == run(torch)
    expected = [] if name == "CosineAnnealingWarmRestarts" else ["The epoch parameter in `scheduler.step()`"]
    assert all(warned == expected for _, warned in ours)


def test_warm_restarts_take_fractional_epochs_as_torch():
    def run(lib):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=3)
        seq = []
        for i in range(40):
            sched.step(i / 4)            # called every batch, four batches per epoch
            seq.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return seq
    assert run(internals) == run(torch)


def comparable(state):
    """A state dict with its callables (not comparable across libraries) left out."""
    return {k: (comparable(v) if isinstance(v, dict) else [comparable(s) if isinstance(s, dict) else s for s in v]
                if isinstance(v, list) else v)
            for k, v in state.items() if not callable(v) or isinstance(v, type)}


@pytest.mark.parametrize("name", list(SCHEDULERS) + ["ReduceLROnPlateau"])
def test_state_dict_round_trip_equals_torch(name):
    """Save after 13 steps; build a fresh optimizer and scheduler, give the optimizer the saved
    hyper-parameters, load the scheduler's state (through pickle) and continue: the lrs go on as the
    uninterrupted run's."""
    make = SCHEDULERS.get(name, lambda m, o: m.ReduceLROnPlateau(o, patience=1))

    def step(sched, i):
        sched.step(1.0 / (1 + i % 5)) if name == "ReduceLROnPlateau" else sched.step()

    def run(lib):
        opt = make_optimizer(lib)
        sched = make(lib.optim.lr_scheduler, opt)
        for i in range(13):
            opt.step()
            step(sched, i)
        state = pickle.loads(pickle.dumps(sched.state_dict()))
        assert "optimizer" not in state
        opt2 = make_optimizer(lib)
        fresh = make(lib.optim.lr_scheduler, opt2)
        for g2, g in zip(opt2.param_groups, opt.param_groups):     # as optimizer.load_state_dict would
            g2.update({k: v for k, v in g.items() if k != "params"})
        fresh.load_state_dict(state)
        assert fresh.get_last_lr() == sched.get_last_lr()
        seq = []
        for i in range(13, 30):
            for s, o in ((sched, opt), (fresh, opt2)):
                o.step()
                step(s, i)
            assert fresh.get_last_lr() == sched.get_last_lr() and hyper(opt2) == hyper(opt)
            seq.append(fresh.get_last_lr())
        return comparable(state), seq
    ours, theirs = run(internals), run(torch)
    assert ours[1] == theirs[1]
    assert ours[0].keys() == theirs[0].keys()
    assert ours[0] == theirs[0]


def test_lambda_state_saves_callable_objects_only():
    states = [SCHEDULERS["LambdaLR-object"](lib.optim.lr_scheduler, make_optimizer(lib)).state_dict()
              for lib in (internals, torch)]
    assert states[0]["lr_lambdas"] == states[1]["lr_lambdas"] == [{"k": 0.5}, None]


def test_get_lr_outside_step_warns_as_torch():
    messages = []
    for lib in (internals, torch):
        sched = lib.optim.lr_scheduler.ExponentialLR(make_optimizer(lib), 0.5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()             # before any optimizer.step()
            sched.get_lr()           # outside step
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 2


def without_momentum(opt):
    """An optimizer whose defaults have neither momentum nor betas, as plain gradient descent."""
    del opt.defaults["momentum"]
    return opt


def step_past_the_end(sched):
    for _ in range(3):
        sched.step()


ERRORS = {
    "MultiplicativeLR-not-callable": lambda m, o: m.MultiplicativeLR(o, [0.5, 0.5]),
    "ConstantLR-factor": lambda m, o: m.ConstantLR(o, factor=1.5),
    "LinearLR-start": lambda m, o: m.LinearLR(o, start_factor=0),
    "LinearLR-end": lambda m, o: m.LinearLR(o, end_factor=2),
    "SequentialLR-empty": lambda m, o: m.SequentialLR(o, [], []),
    "SequentialLR-milestones": lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], [1, 2]),
    "SequentialLR-plateau": lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.ReduceLROnPlateau(o)], [1]),
    "SequentialLR-no-optimizer": lambda m, o: m.SequentialLR(o, [object()], []),
    "ChainedScheduler-empty": lambda m, o: m.ChainedScheduler([]),
    "ReduceLROnPlateau-factor": lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
    "ReduceLROnPlateau-mode": lambda m, o: m.ReduceLROnPlateau(o, mode="lowest"),
    "ReduceLROnPlateau-threshold_mode": lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="ratio"),
    "ReduceLROnPlateau-min_lrs": lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]),
    "ReduceLROnPlateau-not-optimizer": lambda m, o: m.ReduceLROnPlateau(object()),
    "CyclicLR-mode": lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="square"),
    "CyclicLR-max_lr-count": lambda m, o: m.CyclicLR(o, 0.1, [1.0]),
    "CyclicLR-no-momentum": lambda m, o: m.CyclicLR(without_momentum(o), 0.1, 1.0),
    "WarmRestarts-T_0": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    "WarmRestarts-T_mult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "WarmRestarts-eta_min": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "WarmRestarts-negative-epoch": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "OneCycleLR-no-length": lambda m, o: m.OneCycleLR(o, 0.1),
    "OneCycleLR-total_steps": lambda m, o: m.OneCycleLR(o, 0.1, total_steps=0),
    "OneCycleLR-epochs": lambda m, o: m.OneCycleLR(o, 0.1, epochs=2.0, steps_per_epoch=3),
    "OneCycleLR-pct_start": lambda m, o: m.OneCycleLR(o, 0.1, total_steps=5, pct_start=1),
    "OneCycleLR-anneal": lambda m, o: m.OneCycleLR(o, 0.1, total_steps=5, anneal_strategy="exp"),
    "OneCycleLR-past-the-end": lambda m, o: step_past_the_end(m.OneCycleLR(o, 0.1, total_steps=2)),
    "LambdaLR-count": lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_equal_torch(name):
    call = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = assert_same_error(lambda: call(internals.optim.lr_scheduler, make_optimizer(internals)),
                                         lambda: call(torch.optim.lr_scheduler, make_optimizer(torch)))
    assert str(ours) == str(theirs)


def test_names_equal_torch():
    assert internals.optim.lr_scheduler.__all__ == torch.optim.lr_scheduler.__all__
    for name in torch.optim.lr_scheduler.__all__:
        cls = getattr(internals.optim.lr_scheduler, name)
        assert issubclass(cls, internals.optim.lr_scheduler.LRScheduler)
    assert issubclass(internals.optim.lr_scheduler._LRScheduler, internals.optim.lr_scheduler.LRScheduler)
