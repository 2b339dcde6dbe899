"""Printing tensors in torch's style (``torch/_tensor_str.py``): torch's ``_Formatter``, ported;
a complex tensor gets two, one for the real parts and one for the imaginary parts."""
import dataclasses
import math

import numpy as np

from .autograd import forward_grad
from .c10 import scalar_type as st


@dataclasses.dataclass
class _PrinterOptions:
    """torch's ``PRINT_OPTS``: digits after the point, the element count past which a tensor is
    summarized, the items kept at each end of a summarized dim, the line width, and scientific
    notation forced on or off (None: the formatter chooses)."""
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """``torch.set_printoptions``: a profile first, then each option given; ``sci_mode`` is always
    set (left out, it goes back to None)."""
    if profile in _PROFILES:
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dataclasses.asdict(PRINT_OPTS)


def tensor_repr(t):
    if t._is_sparse_any():
        return _sparse_repr(t)
    extras = []
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.is_meta:       # no values to show: torch prints "..." and the size, before the dtype
        extras += [f"size={tuple(t.shape)}", *_meta_dtype(t), *_grad_suffix(t)]
        return _add_suffixes("tensor(...", extras, len("tensor("))
    default = {st.get_default_dtype(), _default_complex(), st.int64, st.bool_}
    if t.dtype not in default or (t.numel() == 0 and t.dtype is not st.get_default_dtype()):
        extras.append(f"dtype=internals.{t.dtype.name}")
    extras += _grad_suffix(t) + _tangent_suffix(t)
    if t.numel() == 0 and t.dim() > 1:
        extras.insert(0, f"size={tuple(t.shape)}")
    return _add_suffixes("tensor(" + _body(t, "tensor("), extras, len("tensor("))


def _grad_suffix(t):
    if t.grad_fn is not None:      # CopySlices, not torch::autograd::CopySlices
        return [f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>"]
    return ["requires_grad=True"] if t.requires_grad else []


def _tangent_suffix(t):
    """A dual tensor shows its tangent at the current forward AD level, as torch's does."""
    if not forward_grad.LEVELS:
        return []
    tangent = forward_grad.fw_grad(t, forward_grad.current_level())
    return [] if tangent is None else [f"tangent={tangent}"]


def _meta_dtype(t):
    """A meta tensor names every dtype but the default one, int64 and bool included (torch's
    ``_str_intern`` takes another branch for it)."""
    return [] if t.dtype is st.get_default_dtype() else [f"dtype=internals.{t.dtype.name}"]


def _add_suffixes(text, suffixes, indent, force_newline=False):
    """``_add_suffixes``: each suffix after ", ", or on a line of its own once the line would pass
    80 columns (torch counts from the last newline, one more than the line); a sparse tensor's
    first suffix always starts a line."""
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        width = len(suffix.replace("internals.", "torch."))     # break where torch's text breaks
        if force_newline or line + width + 2 > PRINT_OPTS.linewidth:
            force_newline = False
            text += ",\n" + " " * indent + suffix
            line = indent + width
        else:
            text += ", " + suffix
            line += width + 2
    return text + ")"


def _body(t, prefix):
    """The values as nested lists (``_tensor_str``); ``prefix`` is what precedes them on the first
    line (its length indents the following lines)."""
    if t.numel() == 0:
        return "[]"
    values = t._host_values()      # a strided view: nothing is copied, and only what is shown is read
    summarize = values.size > PRINT_OPTS.threshold
    shown = _summarized(values) if summarize else values
    if t.dtype.is_complex:
        formatter = _ComplexFormatter(_Formatter(shown.real, t.dtype.to_real()),
                                      _Formatter(shown.imag, t.dtype.to_real()))
    else:
        formatter = _Formatter(shown, t.dtype)
    return _nested(values, len(prefix), summarize, formatter)


def _default_complex():
    """The complex dtype repr leaves unnamed: complex128 under a float64 default, else complex64."""
    return st.complex128 if st.get_default_dtype() is st.float64 else st.complex64


class _Formatter:
    """torch's ``_Formatter``: one width and one style for every element, chosen from the nonzero
    finite values shown: integers print as "3.", else four decimals, or ``{:.4e}`` when the values
    span more than three decades, pass 1e8 or (not all integers) fall below 1e-4."""

    def __init__(self, values, dtype):
        self.floating = dtype.is_floating_point
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max(len(str(v)) for v in values.reshape(-1).tolist())
            return
        with np.errstate(invalid="ignore"):     # a float8 fnuz NaN is a signalling one in float32
            flat = values.reshape(-1).astype(np.float64)
        # e8m0fnu has no zero: torch's ``ne(0)`` reads 0 as its smallest value, 2**-127, which
        # then counts as zero in choosing the format
        zero = 2.0 ** -127 if dtype is st.float8_e8m0fnu else 0
        shown = flat[np.isfinite(flat) & (flat != zero)]
        if not shown.size:
            return
        magnitude = np.abs(shown)
        low, high = magnitude.min(), magnitude.max()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or (not self.int_mode and low < 1.0e-4)
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        self.precision = PRINT_OPTS.precision
        if self.sci_mode:
            self.width = max(len(f"{v:.{self.precision}e}") for v in shown.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in shown.tolist())
        else:
            self.width = max(len(f"{v:.{self.precision}f}") for v in shown.tolist())

    def format(self, value):
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.width)       # inf and nan do not count towards the width


class _ComplexFormatter:
    """A complex value as torch writes it: the real part, then the imaginary part with its sign
    and a "j" (``_scalar_str``), each in its own formatter's width."""

    def __init__(self, real, imag):
        self.real, self.imag = real, imag
        self.width = real.width + imag.width + 1      # torch's element_length, less the ", "

    def format(self, z):
        imag = (self.imag.format(z.imag) + "j").lstrip()
        return self.real.format(z.real) + (imag if imag[0] in "+-" else "+" + imag)


def _nested(values, indent, summarize, formatter):
    """``_tensor_str_with_formatter``: a 0-dim value, a row (``_vector_str``), or rows of rows."""
    if values.ndim == 0:
        return formatter.format(values.item())
    n = values.shape[0]
    edge = PRINT_OPTS.edgeitems
    rows = list(range(edge)) + [None] + list(range(n - edge, n)) if summarize and n > 2 * edge else list(range(n))
    if values.ndim == 1:
        data = [" ..." if i is None else formatter.format(values[i].item()) for i in rows]
        per_line = max(1, (PRINT_OPTS.linewidth - indent) // (formatter.width + 2))
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    slices = ["..." if i is None else _nested(values[i], indent + 1, summarize, formatter) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


_SPARSE_PARTS = {"sparse_coo": ("indices", "values"), "sparse_csr": ("crow_indices", "col_indices", "values"),
                 "sparse_bsr": ("crow_indices", "col_indices", "values"),
                 "sparse_csc": ("ccol_indices", "row_indices", "values"),
                 "sparse_bsc": ("ccol_indices", "row_indices", "values")}


def _sparse_repr(t):
    """The component tensors one under the other (``indices=``, ``values=`` for COO;
    ``crow_indices=``, ``col_indices=``, ``values=`` for CSR and BSR; ``ccol_indices=``,
    ``row_indices=`` for CSC and BSC), then the suffixes after them while the line stays within
    80 columns; a COO tensor's first suffix always starts a line."""
    indent = " " * len("tensor(")
    parts = []
    coo = t.layout.name == "sparse_coo"
    for name in _SPARSE_PARTS[t.layout.name]:
        part = getattr(t, f"_{name}" if coo else name)().detach()
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
    suffixes += _grad_suffix(t)
    return _add_suffixes("tensor(" + (",\n" + indent).join(parts), suffixes, len(indent), force_newline=coo)


def _summarized(values):
    """The elements a summarized print shows (``get_summarized_data``): the first and last
    ``PRINT_OPTS.edgeitems`` along every long dim. Only those are read, so printing an expanded 10**5 x 10**5
    tensor touches a few elements, not 10**10."""
    if values.size <= PRINT_OPTS.threshold:
        return values
    edge = PRINT_OPTS.edgeitems
    keep = [np.r_[0:edge, n - edge:n] if n > 2 * edge else np.arange(n) for n in values.shape]
    return values[np.ix_(*keep)]   # one gather of the shown elements (np.take would copy the whole view)


