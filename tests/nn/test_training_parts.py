"""Differential tests of the training parts against torch: AdamW, the lr schedulers, gradient
clipping, ModuleList/ModuleDict, BCE-with-logits and cross-entropy's soft targets and label
smoothing, and full module backward hooks.

Each test runs the same program with torch and with internals (``import internals as torch``
style) and compares values, grad_fn names, error classes and messages.
"""
import math
import pickle
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

# Float32 tolerance where internals sums in another order than torch (whole-tensor sums, matmul).
TOL = dict(rtol=1e-5, atol=1e-6)
I = internals.from_torch      # noqa: E741


def randn(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def twin(build, seed=0):
    """``build(nn)`` for torch (seeded) and internals, with torch's weights copied into internals'."""
    torch.manual_seed(seed)
    theirs = build(torch.nn)
    ours = build(internals.nn)
    ours.load_state_dict({k: I(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def mlp(nn):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def grads_as_lists(grads):
    return [None if g is None else (tuple(g.shape), g.tolist()) for g in grads]


# =============================================================================================
# AdamW
# =============================================================================================

@pytest.mark.parametrize("config", [dict(), dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True)],
                         ids=["defaults", "decay", "amsgrad"])
def test_adamw_trains_mlp_like_torch(config):
    ours, theirs = twin(mlp)
    opt_ours = internals.optim.AdamW(ours.parameters(), **config)
    opt_theirs = torch.optim.AdamW(theirs.parameters(), foreach=False, **config)
    x, target = randn(16, 4), torch.arange(16) % 3
    for _ in range(20):
        for model, opt, lib, xx, tt in ((ours, opt_ours, internals, I(x), I(target)),
                                        (theirs, opt_theirs, torch, x, target)):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(xx), tt).backward()
            opt.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_same(p.detach(), q.detach(), rtol=0, atol=1e-6)
    assert opt_ours.defaults["weight_decay"] == opt_theirs.defaults["weight_decay"]
    assert opt_ours.defaults["decoupled_weight_decay"] is opt_theirs.defaults["decoupled_weight_decay"] is True


def test_adamw_exports_and_errors():
    assert internals.optim.AdamW.__mro__[1] is internals.optim.Adam
    p = I(torch.ones(2)).requires_grad_()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.AdamW([p], lr=-1.0),
                                             lambda: torch.optim.AdamW([torch.ones(2, requires_grad=True)], lr=-1.0))
    assert str(err_ours) == str(err_theirs)


# =============================================================================================
# lr_scheduler
# =============================================================================================

def twin_optimizers(groups=((0.1,), (0.05,))):
    """SGD optimizers with one parameter group per entry of ``groups`` (its lr)."""
    def make(lib):
        params = [{"params": [lib.nn.Parameter(lib.zeros(2))], "lr": lr} for (lr,) in groups]
        return lib.optim.SGD(params, lr=1.0)
    return make(internals), make(torch)


def lr_sequence(make_scheduler, lib_opt, lib, steps=50, edit=None):
    """The lrs after construction and after each of ``steps`` (optimizer.step, scheduler.step) pairs."""
    sched = make_scheduler(lib.optim.lr_scheduler, lib_opt)
    seq = [sched.get_last_lr()]
    for i in range(steps):
        lib_opt.step()
        if edit is not None and i == steps // 2:
            edit(lib_opt)
        sched.step()
        seq.append(sched.get_last_lr())
        assert [g["lr"] for g in lib_opt.param_groups] == seq[-1]
    return seq, sched


SCHEDULERS = {
    "step": lambda m, o: m.StepLR(o, step_size=7, gamma=0.3),
    "cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=10),
    "cosine_eta_min": lambda m, o: m.CosineAnnealingLR(o, T_max=13, eta_min=0.001),
    "lambda": lambda m, o: m.LambdaLR(o, lambda epoch: 0.95 ** epoch),
    "lambda_per_group": lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
}


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_lrs_equal_torch_exactly(name):
    ours, theirs = twin_optimizers()
    seq_ours, _ = lr_sequence(SCHEDULERS[name], ours, internals)
    seq_theirs, _ = lr_sequence(SCHEDULERS[name], theirs, torch)
    assert seq_ours == seq_theirs        # the same float recurrences, bit for bit


def test_chainable_schedulers_follow_a_manual_lr_change():
    """StepLR and CosineAnnealingLR compute from the group's current lr, so an edit carries on."""
    def halve(opt):
        opt.param_groups[0]["lr"] /= 2
    for name in ("step", "cosine"):
        ours, theirs = twin_optimizers()
        assert lr_sequence(SCHEDULERS[name], ours, internals, 30, halve)[0] == \
            lr_sequence(SCHEDULERS[name], theirs, torch, 30, halve)[0]


def test_scheduler_sets_initial_lr_and_base_lrs():
    for opt, lib in zip(twin_optimizers(), (internals, torch)):
        sched = lib.optim.lr_scheduler.StepLR(opt, 3)
        assert [g["initial_lr"] for g in opt.param_groups] == sched.base_lrs == [0.1, 0.05]
        assert sched.last_epoch == 0 and sched._step_count == 1


def test_scheduler_state_dict_round_trip():
    states = []
    for opt, lib in zip(twin_optimizers(), (internals, torch)):
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        for _ in range(4):
            opt.step()
            sched.step()
        state = sched.state_dict()
        assert "optimizer" not in state
        states.append({k: v for k, v in state.items()})
        fresh = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
        fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
        assert fresh.last_epoch == 4 and fresh.T_max == 10 and fresh.get_last_lr() == sched.get_last_lr()
    assert states[0] == states[1]


def test_lambda_state_dict_skips_functions():
    class Factor:
        def __init__(self):
            self.k = 0.5

        def __call__(self, epoch):
            return self.k ** epoch
    dicts = []
    for opt, lib in zip(twin_optimizers(), (internals, torch)):
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [Factor(), lambda e: 1.0])
        dicts.append(sched.state_dict()["lr_lambdas"])
    assert dicts[0] == dicts[1] == [{"k": 0.5}, None]


def test_step_with_epoch_uses_closed_form():
    seqs = []
    for opt, lib in zip(twin_optimizers(), (internals, torch)):
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            sched.step(5)
        seqs.append(sched.get_last_lr())
    assert seqs[0] == seqs[1]


def test_scheduler_warnings_match_torch():
    messages = []
    for opt, lib in zip(twin_optimizers(), (internals, torch)):
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()             # before any optimizer.step()
            sched.get_lr()           # outside step
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 2


@pytest.mark.parametrize("call", [
    lambda m, o: m.StepLR(object(), 2),
    lambda m, o: m.StepLR(o, 2, last_epoch=3),
    lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
], ids=["not-optimizer", "resume-without-initial-lr", "lambda-count"])
def test_scheduler_errors_match_torch(call):
    ours, theirs = twin_optimizers()
    err_ours, err_theirs = assert_same_error(lambda: call(internals.optim.lr_scheduler, ours),
                                             lambda: call(torch.optim.lr_scheduler, theirs))
    assert str(err_ours) == str(err_theirs)


def test_lr_scheduler_importable_as_in_torch():
    from internals.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, LRScheduler, StepLR
    assert issubclass(CosineAnnealingLR, LRScheduler) and issubclass(StepLR, LRScheduler)
    assert LambdaLR is internals.optim.lr_scheduler.LambdaLR


# =============================================================================================
# clip_grad_norm_
# =============================================================================================

def twin_grads(scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    theirs = [torch.nn.Parameter(torch.randn(*s, generator=g)) for s in ((3, 4), (4,), (2,))]
    for p in theirs[:2]:                  # the last parameter has no gradient
        p.grad = torch.randn(p.shape, generator=g) * scale
    ours = [internals.nn.Parameter(I(p.detach())) for p in theirs]
    for o, t in zip(ours, theirs):
        o.grad = None if t.grad is None else I(t.grad.clone())
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = twin_grads(scale=2.0)
    norm_type = float(norm_type)
    total_ours = internals.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert_same(total_ours, total_theirs, rtol=1e-6, atol=0)
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None
        else:
            assert_same(o.grad, t.grad, rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_single_tensor_and_empty():
    ours, theirs = twin_grads()
    assert_same(internals.nn.utils.clip_grad_norm_(ours[0], 0.1), torch.nn.utils.clip_grad_norm_(theirs[0], 0.1),
                rtol=1e-6, atol=0)
    assert_same(ours[0].grad, theirs[0].grad, rtol=1e-6, atol=1e-7)
    assert_same(internals.nn.utils.clip_grad_norm_([], 1.0), torch.nn.utils.clip_grad_norm_([], 1.0))
    with pytest.warns(UserWarning, match="empty generator"):
        internals.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite():
    ours, theirs = twin_grads()
    theirs[0].grad[0, 0] = float("inf")
    ours[0].grad = I(theirs[0].grad.clone())
    err_ours, err_theirs = assert_same_error(
        lambda: internals.nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True),
        lambda: torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True))
    assert str(err_ours) == str(err_theirs)
    assert_same(internals.nn.utils.clip_grad_norm_(ours, 1.0), torch.nn.utils.clip_grad_norm_(theirs, 1.0))
    for o, t in zip(ours, theirs):       # scaled by max_norm / inf = 0: the inf becomes nan, as in torch
        if t.grad is not None:
            torch.testing.assert_close(torch.tensor(o.grad.tolist()), t.grad, rtol=0, atol=0, equal_nan=True)


# =============================================================================================
# ModuleList, ModuleDict
# =============================================================================================

def build_list(nn):
    return nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 3)])


def names_and_reprs(lib_list):
    return [type(m).__name__ for m in lib_list], repr(lib_list), [n for n, _ in lib_list.named_parameters()]


EDITS = {
    "append": lambda nn, ml: ml.append(nn.ReLU()),
    "extend": lambda nn, ml: ml.extend([nn.ReLU(), nn.Linear(3, 1)]),
    "iadd": lambda nn, ml: ml.__iadd__([nn.Dropout()]),
    "insert": lambda nn, ml: ml.insert(1, nn.Dropout(0.2)),
    "setitem_negative": lambda nn, ml: ml.__setitem__(-1, nn.ReLU()),
    "delitem": lambda nn, ml: ml.__delitem__(1),
    "delitem_negative": lambda nn, ml: ml.__delitem__(-2),
    "delitem_slice": lambda nn, ml: ml.__delitem__(slice(0, 3, 2)),
    "pop": lambda nn, ml: ml.pop(0),
    "add": lambda nn, ml: ml + nn.ModuleList([nn.ReLU()]),
    "slice": lambda nn, ml: ml[1:],
    "nothing": lambda nn, ml: ml,
}


@pytest.mark.parametrize("edit", EDITS)
def test_module_list_edits_match_torch(edit):
    results = []
    for nn in (internals.nn, torch.nn):
        ml = build_list(nn)
        out = EDITS[edit](nn, ml)
        results.append((names_and_reprs(ml), names_and_reprs(out) if isinstance(out, nn.ModuleList) else None,
                        len(ml), sorted(ml._modules)))
    assert results[0] == results[1]


def test_module_list_indexing_and_errors():
    ours, theirs = twin(build_list)
    assert [type(ours[i]).__name__ for i in range(-4, 4)] == [type(theirs[i]).__name__ for i in range(-4, 4)]
    assert ours[-1] is list(ours)[3] and len(ours) == 4
    assert repr(internals.nn.ModuleList()) == repr(torch.nn.ModuleList())
    for bad in (lambda m: m[4], lambda m: m[-5], lambda m: m.extend(3), lambda m: m["a"]):
        err_ours, err_theirs = assert_same_error(lambda bad=bad: bad(ours), lambda bad=bad: bad(theirs))
        assert str(err_ours) == str(err_theirs)


def test_module_list_registers_parameters_and_state_dict():
    ours, theirs = twin(lambda nn: nn.ModuleList([nn.Linear(2, 3) for _ in range(3)]))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)          # three equal children print as "(0-2): 3 x Linear(...)"
    nested = [nn.Sequential(nn.ModuleList([nn.Linear(1, 1)]), nn.ModuleDict({"a": nn.ReLU()}))
              for nn in (internals.nn, torch.nn)]
    assert repr(nested[0]) == repr(nested[1])


def build_dict(nn):
    return nn.ModuleDict({"lin": nn.Linear(2, 2), "act": nn.ReLU()})


DICT_EDITS = {
    "setitem": lambda nn, md: md.__setitem__("out", nn.Linear(2, 1)),
    "update_mapping": lambda nn, md: md.update({"b": nn.ReLU(), "lin": nn.Linear(2, 4)}),
    "update_pairs": lambda nn, md: md.update([("z", nn.Dropout()), ("a", nn.ReLU())]),
    "update_moduledict": lambda nn, md: md.update(nn.ModuleDict({"q": nn.ReLU()})),
    "pop": lambda nn, md: md.pop("lin"),
    "delitem": lambda nn, md: md.__delitem__("act"),
    "clear": lambda nn, md: md.clear(),
}


@pytest.mark.parametrize("edit", DICT_EDITS)
def test_module_dict_edits_match_torch(edit):
    results = []
    for nn in (internals.nn, torch.nn):
        md = build_dict(nn)
        popped = DICT_EDITS[edit](nn, md)
        results.append((list(md.keys()), [type(m).__name__ for m in md.values()],
                        [(k, type(v).__name__) for k, v in md.items()], list(md), len(md), "lin" in md,
                        repr(md), [n for n, _ in md.named_parameters()], type(popped).__name__))
    assert results[0] == results[1]


@pytest.mark.parametrize("bad", [lambda nn, md: md.update(3), lambda nn, md: md.update([("a", nn.ReLU(), 1)]),
                                 lambda nn, md: md.update([3]), lambda nn, md: md["missing"],
                                 lambda nn, md: md.__setitem__("a.b", nn.ReLU())],
                         ids=["not-iterable", "pair-length", "element-not-iterable", "missing-key", "dotted-key"])
def test_module_dict_errors_match_torch(bad):
    err_ours, err_theirs = assert_same_error(lambda: bad(internals.nn, build_dict(internals.nn)),
                                             lambda: bad(torch.nn, build_dict(torch.nn)))
    assert str(err_ours) == str(err_theirs)


def test_containers_have_no_forward():
    for nn in (internals.nn, torch.nn):
        with pytest.raises(NotImplementedError, match=r'Module \[ModuleList\] is missing the required "forward"'):
            nn.ModuleList()(1)


# =============================================================================================
# binary_cross_entropy_with_logits, cross_entropy with soft targets and label smoothing
# =============================================================================================

def call_both(fn_name, args, kwargs):
    """``F.<fn_name>(*args, **kwargs)`` with torch and with internals (tensors converted)."""
    conv = [I(a) if isinstance(a, torch.Tensor) else a for a in args]
    kconv = {k: I(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    return (getattr(internals.nn.functional, fn_name)(*conv, **kconv),
            getattr(torch.nn.functional, fn_name)(*args, **kwargs))


BCE_OPTIONS = {
    "plain": dict(),
    "weight": dict(weight=torch.tensor([0.5, 2.0, 1.0])),
    "pos_weight": dict(pos_weight=torch.tensor([3.0, 0.5, 1.0])),
    "both": dict(weight=torch.rand(4, 3, generator=torch.Generator().manual_seed(3)),
                 pos_weight=torch.tensor([3.0, 0.5, 1.0])),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("option", BCE_OPTIONS)
def test_bce_with_logits_matches_torch(option, reduction):
    x = (randn(4, 3) * 30).requires_grad_()             # large logits: the stable formula matters
    y = torch.rand(4, 3, generator=torch.Generator().manual_seed(2))
    xo = I(x.detach()).requires_grad_()
    ours = internals.nn.functional.binary_cross_entropy_with_logits(
        xo, I(y), reduction=reduction, **{k: I(v) for k, v in BCE_OPTIONS[option].items()})
    theirs = torch.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=reduction, **BCE_OPTIONS[option])
    assert_same(ours, theirs, **TOL)
    assert all(math.isfinite(v) for v in ours.reshape(-1).tolist())
    ours.sum().backward()
    theirs.sum().backward()
    assert_same(xo.grad, x.grad, **TOL)
    module = internals.nn.BCEWithLogitsLoss(reduction=reduction, **{k: I(v) for k, v in BCE_OPTIONS[option].items()})
    assert_same(module(xo, I(y)), torch.nn.BCEWithLogitsLoss(reduction=reduction, **BCE_OPTIONS[option])(x, y), **TOL)


def test_bce_with_logits_module_buffers_and_errors():
    pw = torch.tensor([2.0])
    ours, theirs = internals.nn.BCEWithLogitsLoss(pos_weight=I(pw)), torch.nn.BCEWithLogitsLoss(pos_weight=pw)
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    x = randn(3, 2)
    for bad in (lambda F, lib, x: F.binary_cross_entropy_with_logits(x, lib.zeros(3)),
                lambda F, lib, x: F.binary_cross_entropy_with_logits(x, x, reduction="avg")):
        err_ours, err_theirs = assert_same_error(lambda bad=bad: bad(internals.nn.functional, internals, I(x)),
                                                 lambda bad=bad: bad(torch.nn.functional, torch, x))
        assert str(err_ours).replace("internals.Size", "torch.Size") == str(err_theirs)


CE_CASES = {
    "probs": dict(),
    "probs_weight": dict(weight=torch.tensor([0.2, 1.0, 3.0])),
    "probs_smoothing": dict(label_smoothing=0.2),
    "probs_weight_smoothing": dict(weight=torch.tensor([0.2, 1.0, 3.0]), label_smoothing=0.4),
    "index_smoothing": dict(label_smoothing=0.1),
    "index_smoothing_ignore": dict(label_smoothing=0.3, index_target=[0, -100, 1, 2, -100]),
    "index_smoothing_weight_ignore": dict(label_smoothing=0.25, weight=torch.tensor([0.2, 1.0, 3.0]),
                                          index_target=[0, -100, 1, 2, 2]),
    "index_smoothing_custom_ignore": dict(label_smoothing=0.5, ignore_index=1, index_target=[0, 1, 1, 2, 0]),
    "index_smoothing_one": dict(label_smoothing=1.0),
    "index_negative_smoothing": dict(label_smoothing=-0.5),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CE_CASES)
def test_cross_entropy_soft_targets_and_smoothing_match_torch(case, reduction):
    spec = dict(CE_CASES[case])
    x = (randn(5, 3) * 3).requires_grad_()
    if case.startswith("probs"):
        target = torch.softmax(randn(5, 3, seed=4), 1)
    else:
        target = torch.tensor(spec.pop("index_target", [0, 2, 1, 2, 0]))
    xo = I(x.detach()).requires_grad_()
    ours = internals.nn.functional.cross_entropy(xo, I(target), reduction=reduction,
                                                 **{k: I(v) if isinstance(v, torch.Tensor) else v
                                                    for k, v in spec.items()})
    theirs = torch.nn.functional.cross_entropy(x, target, reduction=reduction, **spec)
    assert_same(ours, theirs, **TOL)
    ours.sum().backward()
    theirs.sum().backward()
    assert_same(xo.grad, x.grad, **TOL)


def test_cross_entropy_unbatched_soft_and_smoothed():
    x, p = randn(4), torch.softmax(randn(4, seed=5), 0)
    for target, kw in ((p, {}), (p, dict(label_smoothing=0.3)), (torch.tensor(2), dict(label_smoothing=0.3))):
        ours, theirs = call_both("cross_entropy", (x, target), kw)
        assert_same(ours, theirs, **TOL)
    module = internals.nn.CrossEntropyLoss(label_smoothing=0.1)
    assert_same(module(I(randn(5, 3)), I(torch.tensor([0, 1, 2, 0, 1]))),
                torch.nn.CrossEntropyLoss(label_smoothing=0.1)(randn(5, 3), torch.tensor([0, 1, 2, 0, 1])), **TOL)


@pytest.mark.parametrize("call", [
    lambda F, lib, x: F.cross_entropy(x, lib.tensor([0, 1, 2]), label_smoothing=1.5),
    lambda F, lib, x: F.cross_entropy(x, x.softmax(1), label_smoothing=1.5),
    lambda F, lib, x: F.cross_entropy(x, x.softmax(1), ignore_index=1),
    lambda F, lib, x: F.cross_entropy(x, lib.zeros(3, 3, dtype=lib.int64)),
    lambda F, lib, x: F.cross_entropy(x, x.softmax(1), weight=lib.ones(2)),
], ids=["index-smoothing-range", "probs-smoothing-range", "probs-ignore-index", "integer-probs", "weight-size"])
def test_cross_entropy_errors_match_torch(call):
    x = randn(3, 3)
    err_ours, err_theirs = assert_same_error(lambda: call(internals.nn.functional, internals, I(x)),
                                             lambda: call(torch.nn.functional, torch, x))
    assert str(err_ours) == str(err_theirs)


# =============================================================================================
# Full backward hooks
# =============================================================================================

def two_input_module(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x, scale, y, z):
            return self.lin(x) * scale + y.sum(), self.lin(z)
    return Net()


def run_hooked(model, lib, replace_input=False, replace_output=False, y_requires_grad=False):
    """One forward and backward with a pre-hook and a hook that log what they receive."""
    log = []

    def pre_hook(module, grad_output):
        log.append(("pre", type(module).__name__, grads_as_lists(grad_output)))
        return (grad_output[0] * 2, grad_output[1]) if replace_output else None

    def hook(module, grad_input, grad_output):
        log.append(("hook", grads_as_lists(grad_input), grads_as_lists(grad_output)))
        return tuple(None if g is None else g * 10 for g in grad_input) if replace_input else None

    handles = [model.register_full_backward_pre_hook(pre_hook), model.register_full_backward_hook(hook)]
    x = randn(2, 3).requires_grad_()
    y = torch.ones(2, 3).requires_grad_(y_requires_grad)
    z = randn(2, 3, seed=7)                 # needs no grad
    if lib is internals:
        x, y, z = I(x.detach()).requires_grad_(), I(y.detach()).requires_grad_(y_requires_grad), I(z)
    a, b = model(x, 3.0, y, z)
    names = (a.grad_fn.name(), b.grad_fn.name())
    (a.sum() + b.sum()).backward()
    for h in handles:
        h.remove()
    return log, names, x.grad.tolist(), None if y.grad is None else y.grad.tolist()


@pytest.mark.parametrize("options", [dict(), dict(replace_input=True), dict(replace_output=True),
                                     dict(y_requires_grad=True, replace_input=True, replace_output=True)],
                         ids=["observe", "replace-grad-input", "replace-grad-output", "all"])
def test_full_backward_hooks_match_torch(options):
    ours, theirs = twin(two_input_module)
    log_ours, names, *grads_ours = run_hooked(ours, internals, **options)
    log_theirs, names_theirs, *grads_theirs = run_hooked(theirs, torch, **options)
    assert names == names_theirs == ("BackwardHookFunctionBackward", "BackwardHookFunctionBackward")
    assert len(log_ours) == 2 and [e[0] for e in log_ours] == ["pre", "hook"]
    for entry_ours, entry_theirs in zip(log_ours, log_theirs):
        assert entry_ours[0] == entry_theirs[0]
        for g_ours, g_theirs in zip(entry_ours[1:], entry_theirs[1:]):
            if isinstance(g_ours, str):
                assert g_ours == g_theirs
                continue
            assert [g is None for g in g_ours] == [g is None for g in g_theirs]
            for a, b in zip(g_ours, g_theirs):
                if a is not None:
                    assert a[0] == b[0]
                    torch.testing.assert_close(torch.tensor(a[1]), torch.tensor(b[1]), **TOL)
    for a, b in zip(grads_ours, grads_theirs):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(b), **TOL)


def test_backward_hook_on_submodule_and_removal():
    ours, theirs = twin(mlp)
    seen = {}
    for name, model in (("ours", ours), ("theirs", theirs)):
        log = seen[name] = []
        handle = model[2].register_full_backward_hook(
            lambda m, gi, go, log=log: log.append((grads_as_lists(gi), grads_as_lists(go))))
        x = randn(5, 4)
        model(I(x) if name == "ours" else x).sum().backward()
        handle.remove()
        model(I(x) if name == "ours" else x).sum().backward()       # removed: not called again
    assert len(seen["ours"]) == len(seen["theirs"]) == 1
    (gi_o, go_o), (gi_t, go_t) = seen["ours"][0], seen["theirs"][0]
    assert gi_o[0][0] == gi_t[0][0] and go_o[0][0] == go_t[0][0]
    torch.testing.assert_close(torch.tensor(gi_o[0][1]), torch.tensor(gi_t[0][1]), **TOL)
    torch.testing.assert_close(torch.tensor(go_o[0][1]), torch.tensor(go_t[0][1]), **TOL)


def test_backward_hook_when_no_input_requires_grad():
    """The input node does not exist: the hook runs at the outputs, with None grad_input, and warns."""
    ours, theirs = twin(lambda nn: nn.Linear(3, 2))
    logs = []
    for model, x in ((ours, I(randn(2, 3))), (theirs, randn(2, 3))):
        log = []
        logs.append(log)
        model.register_full_backward_hook(lambda m, gi, go, log=log: log.append((gi, grads_as_lists(go))))
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            model(x).sum().backward()
    assert logs[0] == logs[1]


def test_backward_hook_wrong_count_errors_match_torch():
    errors = []
    for model, lib in zip(twin(lambda nn: nn.Linear(3, 2)), (internals, torch)):
        model.register_full_backward_hook(lambda m, gi, go: (None, None))
        x = randn(2, 3).requires_grad_()
        x = I(x.detach()).requires_grad_() if lib is internals else x
        with pytest.raises(RuntimeError) as err:
            model(x).sum().backward()
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_backward_hooks_not_called_without_grad():
    ours, _ = twin(lambda nn: nn.Linear(3, 2))
    calls = []
    ours.register_full_backward_hook(lambda *a: calls.append(a))
    with internals.no_grad():
        out = ours(I(randn(2, 3)).requires_grad_())
    assert out.grad_fn is None and not calls


class _TwoInputs:
    """A module of two operators (x·2 + y·3, summed over dim 0) in torch and in internals."""
    @staticmethod
    def make(lib):
        class Sum(lib.nn.Module):
            def forward(self, x, y):
                return (x * 2 + y * 3).sum(0)
        return Sum()


OLDER_HOOK_CASES = {
    # the hook sees the last node's gradients (sum's: one input), and the call warns
    "two_operators": (_TwoInputs.make, lambda lib: (lib.ones(2, 2, requires_grad=True),
                                                    lib.ones(2, 2, requires_grad=True))),
    "linear": (lambda lib: lib.nn.Linear(2, 3), lambda lib: (lib.ones(4, 2, requires_grad=True),)),
    # one operator whose inputs are the module's: no warning
    "relu_of_a_non_leaf": (lambda lib: lib.nn.ReLU(), lambda lib: (lib.ones(3, requires_grad=True) * -1,)),
}


@pytest.mark.parametrize("name", OLDER_HOOK_CASES)
def test_older_backward_hook_is_a_hook_on_the_output_node(name):
    """``register_backward_hook`` (deprecated, still working): grad_input is the output node's,
    and a forward call warns (FutureWarning, torch's text) when that is not the module's."""
    make, inputs = OLDER_HOOK_CASES[name]
    seen = {}
    for lib in (torch, internals):
        lib.manual_seed(0)
        module, log = make(lib), []

        def hook(mod, grad_input, grad_output, log=log, module=module):
            assert mod is module
            log.append(([None if g is None else (tuple(g.shape), g.tolist()) for g in grad_input],
                        [g.tolist() for g in grad_output]))
        module.register_backward_hook(hook)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = module(*inputs(lib))
        out.sum().backward()
        seen[lib] = log, [(w.category, str(w.message)) for w in caught]
    assert seen[internals] == seen[torch]


@pytest.mark.parametrize("first, second", [("register_backward_hook", "register_full_backward_hook"),
                                           ("register_full_backward_hook", "register_backward_hook")])
def test_one_kind_of_backward_hook_per_module(first, second):
    errors = []
    for lib in (torch, internals):
        module = lib.nn.ReLU()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(module, first)(lambda *a: None)
            with pytest.raises(RuntimeError) as err:
                getattr(module, second)(lambda *a: None)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_global_older_backward_hook_runs_on_every_module_and_excludes_full_ones():
    seen = {}
    for lib in (torch, internals):
        module_hooks = lib.nn.modules.module
        log = []
        # the kind stays set after its hooks are removed (in torch too): start from none, then put it back
        kind, module_hooks._global_is_full_backward_hook = module_hooks._global_is_full_backward_hook, None
        handle = module_hooks.register_module_backward_hook(
            lambda m, gi, go, log=log: log.append((type(m).__name__, [g.tolist() for g in go])))
        try:
            with pytest.raises(RuntimeError) as err:
                module_hooks.register_module_full_backward_hook(lambda *a: None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tanh = lib.nn.Tanh()       # kept alive: torch's hook holds the module weakly
                tanh(lib.zeros(2, requires_grad=True) * 1).sum().backward()
        finally:
            handle.remove()
            module_hooks._global_is_full_backward_hook = kind
        seen[lib] = log, str(err.value)
    assert seen[internals] == seen[torch]


def test_hook_handles_are_removable_handles():
    from internals.utils.hooks import RemovableHandle
    handle = internals.nn.Linear(1, 1).register_full_backward_pre_hook(lambda m, g: None)
    assert isinstance(handle, RemovableHandle)


def test_function_materializes_grads_of_non_differentiable_outputs():
    """What lets a hook see zeros for an input that needs no grad: torch's Function hands zeros,
    not None, to backward for an unused non-differentiable output (materialize_non_diff_grads)."""
    seen = []
    for lib in (internals, torch):
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_non_differentiable(y)
                return x.clone(), y.clone()

            @staticmethod
            def backward(ctx, gx, gy):
                seen.append(None if gy is None else gy.tolist())
                return gx, None

        x = lib.ones(2, requires_grad=True)
        a, b = Split.apply(x, lib.ones(2))
        a.sum().backward()
    assert seen == [[0.0, 0.0], [0.0, 0.0]]      # internals, then torch


def test_parameters_as_one_vector_like_torch():
    """``parameters_to_vector`` joins the flattened parameters (a graph back to them);
    ``vector_to_parameters`` rebinds each one's data to a view of the vector; a non-tensor
    vector is refused with torch's TypeError."""
    results = {}
    for lib in (torch, internals):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Conv1d(2, 2, 1))
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(vec.numel(), dtype=vec.dtype)).sum().backward()
        new = lib.arange(vec.numel(), dtype=vec.dtype)
        lib.nn.utils.vector_to_parameters(new, model.parameters())
        new.mul_(2)     # the parameters are views of it now
        with pytest.raises(TypeError) as error:
            lib.nn.utils.vector_to_parameters([1.0], model.parameters())
        results[lib] = ([t.tolist() for t in (vec, model[0].weight.grad, model[1].bias)], vec.grad_fn.name(),
                        str(error.value))
    assert results[internals] == results[torch]


def test_module_half_bfloat16_and_type_like_torch():
    """``half``/``bfloat16`` cast floating parameters and buffers only; ``type`` casts every one,
    the integer batch counter too."""
    seen = {}
    for lib in (torch, internals):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        dtypes = []
        for cast in (lambda m: m.half(), lambda m: m.bfloat16(), lambda m, lib=lib: m.type(lib.float64)):
            assert cast(model) is model
            dtypes.append([str(t.dtype).split(".")[-1] for t in model.state_dict().values()])
        seen[lib] = dtypes
    assert seen[internals] == seen[torch] and seen[torch][2][-1] == "float64"
