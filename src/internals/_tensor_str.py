"""Printing tensors in torch's style (``torch/_tensor_str.py``), via NumPy's formatter."""
import numpy as np

from .c10 import scalar_type as st


def tensor_repr(t):
    values = t._host_values()
    if t.dtype.is_floating_point:
        body = np.array2string(values, separator=", ", prefix="tensor(", precision=4,
                               floatmode="fixed" if _needs_fixed(values) else "maxprec_equal")
    else:
        body = np.array2string(values, separator=", ", prefix="tensor(")
    extras = []
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    default = {st.get_default_dtype(), st.int64, st.bool_}
    if t.dtype not in default or (t.numel() == 0 and t.dtype is not st.get_default_dtype()):
        extras.append(f"dtype=internals.{t.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    if t.numel() == 0 and t.dim() > 1:
        extras.insert(0, f"size={tuple(t.shape)}")
    return "tensor(" + ", ".join([body] + extras) + ")"


def _needs_fixed(values):
    finite = values[np.isfinite(values)] if values.size else values
    return bool(finite.size) and not np.all(finite == np.round(finite))
