"""Build-it exercise for chapter 9 (the capstone): an optimizer step written by hand.

``check_sgd_step(fn)``: ``fn(params, buffers, lr, momentum)`` updates each parameter of the list
in place with SGD with momentum, torch's rule (``torch/optim/sgd.py``): the first step sets the
momentum buffer to the gradient, later steps to ``momentum * buf + grad``; then ``p -= lr * buf``.
``buffers`` is a list of the same length, ``None`` at first, which ``fn`` fills and keeps. The
checker runs a few steps on generated parameter shapes and gradients and compares with
``torch.optim.SGD(..., momentum=momentum)``.
"""
import internals

from ._runner import run_generated

__all__ = ["check_sgd_step"]


def check_sgd_step(fn):
    """Check a hand-written ``sgd_step(params, buffers, lr, momentum)`` against torch.optim.SGD."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it


    shapes = st.lists(st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple), min_size=1, max_size=3)
    cases = st.tuples(shapes, st.sampled_from([0.1, 0.5]), st.sampled_from([0.0, 0.9]), st.integers(0, 99))

    def check_one(case):
        shapes, lr, momentum, seed = case
        g = torch.Generator().manual_seed(seed)
        theirs = [torch.randn(s, generator=g).requires_grad_() for s in shapes]
        ours = [internals.from_torch(p.detach()).requires_grad_() for p in theirs]
        reference = torch.optim.SGD(theirs, lr=lr, momentum=momentum, foreach=False)
        buffers = [None] * len(ours)
        for step in range(3):
            grads = [torch.randn(s, generator=g) for s in shapes]
            for p_t, p_i, grad in zip(theirs, ours, grads):
                p_t.grad, p_i.grad = grad.clone(), internals.from_torch(grad)
            reference.step()
            fn(ours, buffers, lr, momentum)
            for i, (p_t, p_i) in enumerate(zip(theirs, ours)):
                assert torch.allclose(p_i.detach().to_torch(), p_t.detach(), atol=1e-6), \
                    f"parameter {i} after step {step + 1}: yours {p_i.tolist()}, torch's {p_t.tolist()}"
    return run_generated("check_sgd_step", cases, check_one, max_examples=30)
