"""Chapter 9's core exercise: an optimizer step written by hand, SGD as ``torch/optim/sgd.py``
runs it (``_single_tensor_sgd``). Plug a right answer in with
``internals.exercises.use_mine("sgd_step", fn)``: ``internals.optim.SGD.step`` then calls it, and the
capstone trains with it.

``fn(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize)``
updates each parameter in place; ``momentum_buffers`` is a list as long as ``params``, ``None``
where a parameter has no buffer yet, which ``fn`` fills and later updates in place.
"""
import internals

from ._runner import run_generated

__all__ = ["check_sgd_step"]

_SETTINGS = [dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
             dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
             dict(momentum=0.9, dampening=0.3, weight_decay=0.0, nesterov=False, maximize=False),
             dict(momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True, maximize=False),
             dict(momentum=0.5, dampening=0.0, weight_decay=0.1, nesterov=False, maximize=True)]


def _cases():
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    shapes = st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple), min_size=1, max_size=3)
    # in_place_zero: zero_grad(set_to_none=False) between steps, so each new gradient is written
    # into the same tensor, as a training loop that keeps its gradients does.
    return st.tuples(shapes, st.sampled_from([0.1, 0.5]), st.sampled_from(range(len(_SETTINGS))),
                     st.booleans(), st.integers(0, 99))


def check_sgd_step(fn):
    """Check ``fn`` (the signature above) against ``torch.optim.SGD`` over three steps."""
    import torch  # torch is heavy: only a check needs it

    def check_one(case):
        shapes, lr, setting, in_place_zero, seed = case
        options = _SETTINGS[setting]
        g = torch.Generator().manual_seed(seed)
        theirs = [torch.randn(s, generator=g).requires_grad_() for s in shapes]
        ours = [internals.from_torch(p.detach()).requires_grad_() for p in theirs]
        reference = torch.optim.SGD(theirs, lr=lr, foreach=False, **options)
        buffers = [None] * len(ours)
        for step in range(3):
            grads = [torch.randn(s, generator=g) for s in shapes]
            for p_t, p_i, grad in zip(theirs, ours, grads):
                if in_place_zero and p_t.grad is not None:
                    p_t.grad.zero_().add_(grad)
                    p_i.grad.zero_().add_(internals.from_torch(grad))
                else:
                    p_t.grad, p_i.grad = grad.clone(), internals.from_torch(grad)
            reference.step()
            with internals.no_grad():
                fn(ours, [p.grad for p in ours], buffers, lr=lr, **options)
            for i, (p_t, p_i) in enumerate(zip(theirs, ours)):
                assert torch.allclose(p_i.detach().to_torch(), p_t.detach(), rtol=1e-5, atol=1e-6), (
                    f"{options}, lr {lr}{', gradients zeroed in place' if in_place_zero else ''}: parameter {i} "
                    f"after step {step + 1}: yours {p_i.tolist()}, torch's {p_t.tolist()}")
    return run_generated("check_sgd_step", _cases(), check_one, max_examples=25)
