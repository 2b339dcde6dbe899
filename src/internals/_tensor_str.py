"""Printing tensors in torch's style (``torch/_tensor_str.py``): real dtypes via NumPy's
formatter; complex ones with torch's own ``_Formatter``, ported (one for the real parts, one for
the imaginary parts)."""
import math

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
    default = {st.get_default_dtype(), _default_complex(), st.int64, st.bool_}
    if t.dtype not in default or (t.numel() == 0 and t.dtype is not st.get_default_dtype()):
        extras.append(f"dtype=internals.{t.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    if t.numel() == 0 and t.dim() > 1:
        extras.insert(0, f"size={tuple(t.shape)}")
    return _add_suffixes("tensor(" + _body(t, "tensor("), extras, len("tensor("))


def _add_suffixes(text, suffixes, indent):
    """``_add_suffixes``: each suffix after ", ", or on a new line once the line would pass the
    line width (torch measures the last line one longer than it is)."""
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > LINEWIDTH:
            text += ",\n" + " " * indent + suffix
            line = indent + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def _body(t, prefix):
    """The values as nested lists; ``prefix`` is what precedes them on the first line (its length
    indents the following lines)."""
    values = t._host_values()      # a strided view: nothing is copied
    shown = _summarized(values)     # what is printed: formats are chosen from it, as torch does
    if t.dtype.is_complex:
        formatters = _Formatter(shown.real), _Formatter(shown.imag)
        return _complex_str(values, *formatters, len(prefix), values.size > THRESHOLD)
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
    if t.dtype not in {st.get_default_dtype(), _default_complex(), st.int64, st.bool_}:
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


def _default_complex():
    """The complex dtype repr leaves unnamed: complex128 under a float64 default, else complex64."""
    return st.complex128 if st.get_default_dtype() is st.float64 else st.complex64


class _Formatter:
    """torch's ``_Formatter`` for floats: one width and one style for every value printed.

    From the nonzero finite values: integer mode if all are whole; scientific if the largest
    and smallest magnitudes are more than 1000 apart, or the largest exceeds 1e8, or the smallest
    is under 1e-4; the width is the widest value written in that style.
    """

    def __init__(self, values):
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        finite = values[np.isfinite(values) & (values != 0)]
        if not finite.size:
            return
        magnitudes = np.abs(finite).astype(np.float64)
        low, high = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        extra = 1 if self.int_mode and not self.sci_mode else 0     # the "." an integer mode adds
        self.max_width = max(len(self._text(v)) + extra for v in finite.tolist())

    def _text(self, value):
        if self.sci_mode:
            return f"{value:.4e}"
        return f"{value:.0f}" if self.int_mode else f"{value:.4f}"

    def format(self, value):
        text = self._text(value)
        if self.int_mode and not self.sci_mode and math.isfinite(value):
            text += "."
        return text.rjust(self.max_width)


def _complex_value(z, real, imag):
    """``real_str`` then the imaginary part with its sign and a "j" (a "+" unless it has a sign)."""
    imag_text = (imag.format(z.imag) + "j").lstrip()
    return real.format(z.real) + (imag_text if imag_text[0] in "+-" else "+" + imag_text)


def _complex_str(values, real, imag, indent, summarize):
    """``_tensor_str_with_formatter``: nested brackets, rows cut to the line width, and in a
    summarized print (more than THRESHOLD elements in all) long dims cut to their edge items."""
    if values.ndim == 0:
        return _complex_value(values[()], real, imag)
    n = values.shape[0]
    rows = range(n)
    if summarize and n > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)]
    if values.ndim == 1:
        items = [" ..." if i is None else _complex_value(values[i], real, imag) for i in rows]
        per_line = max(1, math.floor((LINEWIDTH - indent) / (real.max_width + 2 + imag.max_width + 1)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    slices = ["..." if i is None else _complex_str(values[i], real, imag, indent + 1, summarize) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"
