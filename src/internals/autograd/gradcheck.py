"""Check analytical gradients against finite differences (``torch/autograd/gradcheck.py``).

The numerical Jacobian perturbs each input element by +-eps (central differences); the
analytical one is built row by row, one backward pass per output element. Both should be
computed in float64: in float32 the finite differences alone are off by more than atol.

A complex number counts as two real coordinates, its real and imaginary parts, in inputs and
outputs alike. Backward gives, for a seed ``g`` on output y, the gradient of the real loss
Re(sum(conj(g) * y)) in torch's convention (d/dRe x + i d/dIm x): so the seed 1 gives the row of
Re y, the seed 1j the row of Im y, and a complex gradient's two parts are the row's two halves.
"""
import warnings

import numpy as np

from .._tensor_base import TensorBase
from ..aten.native.tensor_factories import empty, zeros_like
from ..c10 import scalar_type as st
from ..c10.memory_format import contiguous_format

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the Jacobians differ (``torch.autograd.gradcheck.GradcheckError``)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _real_coordinates(t):
    """A tensor's values as float64s, a complex one as (real, imag) pairs."""
    t = t.detach().cpu().resolve_conj()
    if t.dtype.is_complex:
        return t.numpy().astype(np.complex128).view(np.float64).ravel()
    return t.double().numpy().ravel()


def _flat_outputs(fn, inputs):
    # with gradients recorded, as torch evaluates it: gradgradcheck's function is itself a backward
    # pass (autograd.grad), which needs its outputs' graph
    outputs = _as_tuple(fn(*inputs))
    return np.concatenate([_real_coordinates(o) for o in outputs if isinstance(o, TensorBase)])


def _numerical_jacobian(fn, inputs, x, eps):
    values = x.detach().numpy()             # shares x's memory: perturb in place, then restore
    if x.dtype.is_complex:
        values = values.view(values.real.dtype)     # each real and imaginary part perturbed in turn
    columns = []
    for index in np.ndindex(values.shape):
        original = values[index].item()
        values[index] = original + eps
        plus = _flat_outputs(fn, inputs)
        values[index] = original - eps
        minus = _flat_outputs(fn, inputs)
        values[index] = original
        columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))


def _analytical_jacobians(fn, inputs, wrt):
    from . import grad  # the autograd package imports gradcheck: a real cycle
    outputs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, TensorBase)]
    rows = []
    widths = [x.numel() * (2 if x.dtype.is_complex else 1) for x in wrt]
    for out in outputs:
        for k in range(out.numel()):
            for unit in ((1.0, 1j) if out.dtype.is_complex else (1.0,)):
                if not out.requires_grad:
                    rows.append([np.zeros(w) for w in widths])
                    continue
                seed = zeros_like(out, memory_format=contiguous_format)    # so view(-1) works
                seed.view(-1)[k] = unit
                grads = grad([out], wrt, [seed], retain_graph=True, allow_unused=True)
                rows.append([np.zeros(w) if g is None else _real_coordinates(g) for g, w in zip(grads, widths)])
    return [np.array([row[i] for row in rows]).reshape(-1, w) for i, w in enumerate(widths)]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_):
    """True if the analytical Jacobian of ``func`` at ``inputs`` matches the numerical one."""
    inputs = _as_tuple(inputs)
    wrt = [x for x in inputs if isinstance(x, TensorBase) and x.requires_grad]
    for i, x in enumerate(inputs):      # torch's _check_inputs: finite differences want float64
        if isinstance(x, TensorBase) and x.requires_grad and x.dtype not in (st.float64, st.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ", stacklevel=2)
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    analytical = _analytical_jacobians(func, inputs, wrt)
    for i, x in enumerate(wrt):
        numerical = _numerical_jacobian(func, inputs, x, eps)
        a = analytical[i]
        if numerical.shape != a.shape or not np.all(np.abs(a - numerical) <= atol + rtol * np.abs(numerical)):
            if raise_exception:
                raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                     f"numerical:{numerical}\nanalytical:{a}\n")
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_):
    """gradcheck of the first gradients: the function checked maps (inputs, cotangents) to the
    gradients of ``func``'s outputs weighted by the cotangents, built with ``create_graph``. Without
    ``grad_outputs`` the cotangents are drawn uniformly in [-1, 1) from the global generator, as
    torch's ``make_tensor`` draws them (float64 for a non-floating output)."""
    from . import grad  # the autograd package imports gradcheck: a real cycle
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, TensorBase) and o.requires_grad]
        grad_outputs = tuple(
            empty(o.shape, dtype=o.dtype if o.is_floating_point() or o.is_complex() else st.float64)
            .uniform_(-1, 1).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    count = len(grad_outputs)
    differentiable = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]

    def first_gradients(*args):
        outputs = [o for o in _as_tuple(func(*args[:-count])) if isinstance(o, TensorBase) and o.requires_grad]
        grads = grad(outputs, [args[i] for i in differentiable], args[-count:], create_graph=True,
                     allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_gradients, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
