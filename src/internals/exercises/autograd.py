"""Build-it exercises for chapter 6 (autograd): checkers for backward formulas the reader writes.

``check_mul_backward(fn)``: ``fn(grad, self, other)`` returns ``(grad_self, grad_other)`` for
``self * other`` with broadcasting, as ``MulBackward0`` does (``derivatives.yaml``'s
``grad * other`` and ``grad * self``, each summed back to its input's shape). Compared with
``torch.autograd.grad`` on generated broadcastable shapes.

``check_tanh_backward(fn)``: ``fn(grad, result)`` returns the gradient of ``tanh`` from its saved
*output* (torch's ``tanh_backward``). Compared with torch on generated values.
"""
import internals

from ._runner import run_generated

__all__ = ["check_mul_backward", "check_tanh_backward"]


def _pair(shape_a, shape_b, seed):
    import torch  # torch is heavy: only a check needs it
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape_a, generator=g, dtype=torch.float64),
            torch.randn(shape_b, generator=g, dtype=torch.float64))


def _same(ours, theirs, what):
    import torch  # torch is heavy: only a check needs it
    assert ours is not None, f"{what} is None"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)}, torch's {tuple(theirs.shape)}"
    assert torch.allclose(ours.to_torch(), theirs), f"{what}: yours {ours.tolist()}, torch's {theirs.tolist()}"


def check_mul_backward(fn):
    """Check ``fn(grad, self, other) -> (grad_self, grad_other)`` against torch's gradients of ``self * other``."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    from hypothesis.extra.numpy import mutually_broadcastable_shapes  # hypothesis is heavy: only a checker needs it


    cases = st.tuples(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), st.integers(0, 99))

    def check_one(case):
        (shapes, out_shape), seed = case
        a, b = (t.requires_grad_() for t in _pair(*shapes, seed))
        grad = torch.full(out_shape, 2.0, dtype=torch.float64)
        grad = grad.cumsum(-1) if out_shape else grad
        theirs = torch.autograd.grad(a * b, (a, b), grad)
        ours = fn(*(internals.from_torch(t.detach()) for t in (grad, a, b)))
        _same(ours[0], theirs[0], f"grad_self for shapes {shapes}")
        _same(ours[1], theirs[1], f"grad_other for shapes {shapes}")
    return run_generated("check_mul_backward", cases, check_one)


def check_tanh_backward(fn):
    """Check ``fn(grad, result) -> grad_input`` (``result = tanh(x)``) against torch's gradient."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it


    values = st.lists(st.floats(-6, 6), min_size=1, max_size=6)

    def check_one(xs):
        x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
        y = x.tanh()
        grad = torch.linspace(-1, 1, len(xs), dtype=torch.float64)
        theirs, = torch.autograd.grad(y, x, grad)
        ours = fn(internals.from_torch(grad), internals.from_torch(y.detach()))
        _same(ours, theirs, f"the gradient at x = {xs}")
    return run_generated("check_tanh_backward", values, check_one)
