"""Printing tensors in torch's style (``torch/_tensor_str.py``), via NumPy's formatter."""
import numpy as np

from .c10 import scalar_type as st

LINEWIDTH = 80   # torch's PRINT_OPTS.linewidth
THRESHOLD, EDGEITEMS = 1000, 3   # torch's PRINT_OPTS: more elements than this print as "..."


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
    values = t._host_values()      # a strided view: nothing is copied
    shown = _summarized(values)     # what is printed: formats are chosen from it, as torch does
    if t.dtype.is_floating_point:
        text = np.array2string(values, separator=", ", prefix=prefix, precision=4,
                               floatmode="fixed" if _needs_fixed(shown) else "maxprec_equal")
        return _torch_ellipsis(text, values)
    if t.dtype is st.bool_ and values.size:
        # NumPy pads every bool to the width of "False"; torch to the widest value printed.
        width = max(len(str(v)) for v in shown.flat)
        text = np.array2string(values, separator=", ", prefix=prefix, formatter={"bool": lambda v: str(v).rjust(width)})
        return _torch_ellipsis(text, values)
    return _torch_ellipsis(np.array2string(values, separator=", ", prefix=prefix), values)


def _torch_ellipsis(text, values):
    """torch writes the elided middle of a row as ",  ...," (two spaces), NumPy as ", ...,"."""
    return text.replace(", ...,", ",  ...,") if values.size > THRESHOLD else text


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


def _summarized(values):
    """The elements a summarized print shows (``get_summarized_data``): the first and last
    ``EDGEITEMS`` along every long dim. Only those are read, so printing an expanded 10**5 x 10**5
    tensor touches a few elements, not 10**10."""
    if values.size <= THRESHOLD:
        return values
    keep = [np.r_[0:EDGEITEMS, n - EDGEITEMS:n] if n > 2 * EDGEITEMS else np.arange(n) for n in values.shape]
    return values[np.ix_(*keep)]   # one gather of the shown elements (np.take would copy the whole view)


def _needs_fixed(values):
    """Four digits after the point for every value (torch's ``_Formatter``): unless all values are
    integers printed as integers ("0., 1."), which holds while they span at most three decades
    below 1e8; beyond that torch prints ``{:.4e}``."""
    finite = values[np.isfinite(values)] if values.size else values
    if not finite.size:
        return False
    if not np.all(finite == np.round(finite)):
        return True
    nonzero = np.abs(finite[finite != 0])
    return bool(nonzero.size) and (nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8)
