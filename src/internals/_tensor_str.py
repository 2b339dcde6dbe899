"""Printing tensors in torch's style (``torch/_tensor_str.py``), via NumPy's formatter."""
import numpy as np

from .c10 import scalar_type as st

LINEWIDTH = 80   # torch's PRINT_OPTS.linewidth


def tensor_repr(t):
    if t.is_sparse:
        return _sparse_repr(t)
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
    return "tensor(" + ", ".join([_body(t, "tensor(")] + extras) + ")"


def _body(t, prefix):
    """The values as nested lists; ``prefix`` is what precedes them on the first line (its length
    indents the following lines)."""
    values = t._host_values()
    if t.dtype.is_floating_point:
        return np.array2string(values, separator=", ", prefix=prefix, precision=4,
                               floatmode="fixed" if _needs_fixed(values) else "maxprec_equal")
    if t.dtype is st.bool_ and values.size:
        # NumPy pads every bool to the width of "False"; torch to the widest value printed.
        width = max(len(str(v)) for v in values.flat)
        return np.array2string(values, separator=", ", prefix=prefix, formatter={"bool": lambda v: str(v).rjust(width)})
    return np.array2string(values, separator=", ", prefix=prefix)


def _sparse_repr(t):
    """``indices=tensor(...)`` and ``values=tensor(...)`` one under the other, then the suffixes:
    the first on a new line, the next ones after it while the line stays within 80 columns."""
    indent = " " * len("tensor(")
    parts = []
    for name, part in (("indices", t._indices()), ("values", t._values())):
        prefix = f"{name}=tensor("
        body = _body(part, indent + prefix)
        if part.numel() == 0:
            body += f", size={tuple(part.shape)}"
        parts.append(prefix + body + ")")
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    suffixes += [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype not in {st.get_default_dtype(), st.int64, st.bool_}:
        suffixes.append(f"dtype=internals.{t.dtype.name}")
    suffixes.append(f"layout={t.layout}")
    text = "tensor(" + (",\n" + indent).join(parts)
    line = len(indent) + len(parts[-1]) + 1    # torch counts from the last newline, one more than the line
    for i, suffix in enumerate(suffixes):
        if i == 0 or line + len(suffix) + 2 > LINEWIDTH:
            text += ",\n" + indent + suffix
            line = len(indent) + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def _needs_fixed(values):
    finite = values[np.isfinite(values)] if values.size else values
    return bool(finite.size) and not np.all(finite == np.round(finite))
