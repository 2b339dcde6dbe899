"""Step hooks against torch (``torch/optim/optimizer.py``): an optimizer's own pre- and post-hooks,
the hooks registered for every optimizer, their order, a pre-hook that changes the step's
arguments, a handle's ``remove()``, and a pre-hook that returns something else; the state dict
hooks around ``state_dict`` and ``load_state_dict``."""
import importlib

import pytest
import torch

import internals


def _run(lib, opt_name="SGD"):
    """Two steps with every kind of hook; the log of who ran, with what."""
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    opt = getattr(lib.optim, opt_name)(model.parameters(), lr=0.1)
    log = []

    def pre(tag):
        def hook(optimizer, args, kwargs):
            log.append((tag, optimizer is opt, len(args), args[0] is opt, sorted(kwargs)))
        return hook

    def post(tag):
        def hook(optimizer, args, kwargs):
            log.append((tag, optimizer is opt, len(args), sorted(kwargs)))
        return hook

    def closure():
        log.append("closure")
        opt.zero_grad()
        loss = model(lib.ones(4, 3)).pow(2).sum()
        loss.backward()
        return loss

    def add_closure(optimizer, args, kwargs):      # a pre-hook may change the step's arguments
        return args, {**kwargs, "closure": closure}

    everyone = importlib.import_module(f"{lib.__name__}.optim.optimizer")     # as a user imports it
    handles = [everyone.register_optimizer_step_pre_hook(pre("global pre")),
               everyone.register_optimizer_step_post_hook(post("global post")),
               opt.register_step_pre_hook(pre("own pre")), opt.register_step_post_hook(post("own post")),
               opt.register_step_pre_hook(add_closure)]
    try:
        loss = opt.step()
        handles[2].remove()
        handles[2].remove()                         # a second remove does nothing
        opt.step()
    finally:
        for h in handles:
            h.remove()
    opt.step(closure)                               # no hook left: the closure alone
    return log, loss.item(), [v for p in model.parameters() for v in p.detach().flatten().tolist()]


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_step_hooks_run_in_torchs_order_with_torchs_arguments(name):
    ours, theirs = _run(internals, name), _run(torch, name)
    assert ours[0] == theirs[0]
    assert ours[1] == pytest.approx(theirs[1], rel=1e-6)
    assert ours[2] == pytest.approx(theirs[2], rel=1e-5, abs=2e-6)    # a product's last bits, by CPU


@pytest.mark.parametrize("bad", [1, (1,), (1, 2, 3), [(), {}]], ids=["int", "one", "three", "list"])
def test_a_pre_hook_returning_anything_else_raises_runtime_error(bad):
    for lib in (internals, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: bad)
        with pytest.raises(RuntimeError, match="must return None or a tuple of"):
            opt.step()


def _state_dict_hooks(lib):
    """Every state dict hook, one prepended, one removed; the log, the dicts saved and loaded."""
    lib.manual_seed(0)
    model = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append(("pre", o is opt)))
    opt.register_state_dict_pre_hook(lambda o: log.append("first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": len(sd["param_groups"])})
    opt.register_state_dict_post_hook(lambda o, sd: log.append(sorted(sd))).remove()
    saved = opt.state_dict()

    def halve_lr(o, sd):
        log.append(("load pre", sorted(sd)))
        sd["param_groups"] = [{**g, "lr": g["lr"] / 2} for g in sd["param_groups"]]
    opt.register_load_state_dict_pre_hook(halve_lr)
    opt.register_load_state_dict_post_hook(lambda o: log.append(("load post", o.param_groups[0]["lr"])))
    opt.load_state_dict(saved)
    return log, sorted(saved), saved["extra"], saved["param_groups"][0]["lr"]


def test_state_dict_hooks_run_as_torchs():
    assert _state_dict_hooks(internals) == _state_dict_hooks(torch)
