"""``differentiable=True`` against torch: the step runs with grad enabled, so a loss after two
steps differentiates back through them, to the parameters before the first step and to a learning
rate that requires grad (meta-learning). The updated parameters, their ``grad_fn`` names, the
optimizer state and every gradient must equal torch's; foreach= and fused= fail as torch's do."""
import pytest
import torch
from helpers import LIBM_ULPS, assert_same, assert_same_error

import internals

# The step's own operators are torch's, in torch's order, but a power of the step count
# (Adam's bias corrections) and the square roots are library math: within a few ulps.
ULPS = 4 * LIBM_ULPS

CONFIGS = {
    "SGD": ("SGD", dict(lr=0.1)),
    "SGD-momentum": ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    "SGD-tensor-lr": ("SGD", dict(lr="tensor", momentum=0.5)),
    "Adam": ("Adam", dict(lr=0.1, weight_decay=0.01)),
    "Adam-amsgrad": ("Adam", dict(lr=0.1, amsgrad=True, maximize=True)),
    "Adam-tensor-lr": ("Adam", dict(lr="tensor")),
    "AdamW": ("AdamW", dict(lr=0.1)),
    "RMSprop": ("RMSprop", dict(lr=0.01)),
    "RMSprop-centered": ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    "Adagrad": ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    "Adadelta": ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    "Adadelta-tensor-lr": ("Adadelta", dict(lr="tensor", maximize=True)),
    "Rprop": ("Rprop", dict(lr=0.1, step_sizes=(1e-3, 0.5))),
}


def _meta_step(lib, name, config, steps):
    """Two differentiable steps on a clone of a leaf, the gradient itself a function of the
    parameters (``create_graph``), then a loss differentiated to the leaf and the learning rate."""
    w = lib.tensor([[0.5, -1.25, 2.0], [0.75, 0.1, -0.3]], dtype=lib.float64, requires_grad=True)
    config = dict(config)
    lr = None
    if config.get("lr") == "tensor":
        lr = config["lr"] = lib.tensor(0.05, dtype=lib.float64, requires_grad=True)
    p = w.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **config)
    nodes = []
    for _ in range(steps):
        q = p.clone()         # what the loss saves must outlive the step's in-place update of p
        loss = (q.sin() * q).sum()
        (p.grad,) = lib.autograd.grad(loss, q, create_graph=True)
        opt.step()
        nodes.append(type(p.grad_fn).__name__)
    final = (p * p).sum()
    targets = [w] + ([lr] if lr is not None else [])
    grads = lib.autograd.grad(final, targets, create_graph=True)
    second = lib.autograd.grad(grads[0].sum(), w)[0]
    state = [v for s in opt.state.values() for k, v in sorted(s.items()) if k != "step"]
    return p, nodes, grads, second, state, lib.is_grad_enabled()


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("case", CONFIGS)
def test_meta_gradients_through_steps_match_torch(case, steps):
    """A second step's in-place update of a state buffer that the first step's graph saved (the
    momentum buffer times a tensor lr, amsgrad's maximum, centered RMSprop's average) makes
    torch's backward fail with a version-counter error: the package's must fail alike."""
    name, config = CONFIGS[case]
    try:
        p_t, nodes_t, grads_t, second_t, state_t, mode_t = _meta_step(torch, name, config, steps)
    except (RuntimeError, TypeError):       # TypeError: a tensor lr that requires grad as add_'s alpha
        ours, theirs = assert_same_error(lambda: _meta_step(internals, name, config, steps),
                                         lambda: _meta_step(torch, name, config, steps))
        assert str(ours) == str(theirs)
        return
    p_i, nodes_i, grads_i, second_i, state_i, mode_i = _meta_step(internals, name, config, steps)
    assert nodes_i == nodes_t
    assert mode_i is mode_t is True          # the caller's grad mode is restored
    assert_same(p_i, p_t, ulps=ULPS)
    for ours, theirs in zip(state_i, state_t, strict=True):
        assert_same(ours, theirs, ulps=ULPS)
        assert ours.requires_grad == theirs.requires_grad
    for ours, theirs in zip((*grads_i, second_i), (*grads_t, second_t), strict=True):
        assert_same(ours, theirs, ulps=ULPS)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Rprop"])
def test_a_plain_step_records_nothing_and_refuses_a_non_leaf(name):
    for lib in (internals, torch):
        w = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.1)
        w.grad = lib.ones(3)
        opt.step()
        assert w.grad_fn is None and w.is_leaf
    assert_same_error(lambda: internals.optim.SGD([internals.ones(3, requires_grad=True).clone()], lr=0.1),
                      lambda: torch.optim.SGD([torch.ones(3, requires_grad=True).clone()], lr=0.1))


OPTIONS = {
    "SGD-fused": ("SGD", dict(fused=True)),
    "SGD-foreach": ("SGD", dict(foreach=True)),
    "Adam-fused": ("Adam", dict(fused=True)),
    "Adam-foreach": ("Adam", dict(foreach=True)),
    "AdamW-foreach": ("AdamW", dict(foreach=True)),
    "RMSprop-foreach": ("RMSprop", dict(foreach=True)),
    "RMSprop-fused": ("RMSprop", dict(fused=True)),
    "Adagrad-fused": ("Adagrad", dict(fused=True)),
    "Adagrad-foreach": ("Adagrad", dict(foreach=True)),
    "Adagrad-foreach-no-grads": ("Adagrad", dict(foreach=True)),
    "Adam-foreach-no-grads": ("Adam", dict(foreach=True)),
    "Adadelta-foreach": ("Adadelta", dict(foreach=True)),
    "Adadelta-foreach-no-grads": ("Adadelta", dict(foreach=True)),
    "Rprop-foreach": ("Rprop", dict(foreach=True)),
    "Rprop-foreach-no-grads": ("Rprop", dict(foreach=True)),
    "SparseAdam": ("SparseAdam", dict()),
}


@pytest.mark.parametrize("case", OPTIONS)
def test_fused_and_foreach_with_differentiable_as_torch(case):
    """torch's fused kernels refuse differentiable in the constructor; its multi-tensor Adam,
    RMSprop and Adagrad fail when the step runs (SGD's records the same graph); SparseAdam has
    no such argument."""
    name, option = OPTIONS[case]

    def run(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        p = w.clone()
        opt = getattr(lib.optim, name)([p], lr=0.1, differentiable=True, **option)
        if "no-grads" not in case:
            p.grad = lib.tensor([0.5, 0.25, -1.0])
        opt.step()
        return p

    try:
        theirs = run(torch)
    except Exception:      # noqa: BLE001 -- the class and the message are what is compared
        ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
        assert str(ours) == str(theirs).replace("torch.", "internals.") or type(ours) is TypeError
        return
    ours = run(internals)
    assert_same(ours, theirs, ulps=ULPS)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_step_count_that_requires_grad_is_refused_by_adam():
    def run(lib):
        p = lib.ones(3, requires_grad=True).clone()
        opt = lib.optim.Adam([p], differentiable=True)
        p.grad = lib.ones(3)
        opt.step()
        opt.state[p]["step"].requires_grad_(True)
        opt.step()
    ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(ours) == str(theirs)
