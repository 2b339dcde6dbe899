"""``check``: the course's one comparison between an internals tensor and a torch tensor.

It compares values, shape, strides, storage offset and dtype, raises ``AssertionError`` on
the first mismatch, and returns a one-line confirmation for the notebooks to print. ``check_all``
checks a group of pairs and returns one line for the whole group; ``check_views`` checks a named
group and returns a table of their layouts with one line for the whole group.

``check(..., ulps=n)`` is for results whose last bits torch itself takes from the CPU (library
math functions, BLAS products, reductions whose order follows the vector width, fused
multiply-adds): dtype, shape and layout must still be equal, NaN and infinities sit at the same
places, and every other value is within ``n`` units in the last place of torch's value
(``assert_within_ulps``). Everything torch computes the same on every CPU is compared exactly.
"""
from ._tensor import Tensor
from .display import table

__all__ = ["assert_within_ulps", "check", "check_all", "check_views"]


def check(ours, theirs, *, rtol=None, atol=None, exact_layout=True, ulps=None):
    """Compare ``ours`` (internals) with ``theirs`` (torch); return a short confirmation.

    ``ulps=n`` compares values within ``n`` units in the last place (``assert_within_ulps``)
    instead of ``rtol``/``atol``."""
    import torch  # torch is heavy: only a check needs it
    if not isinstance(ours, Tensor):
        raise AssertionError(f"expected an internals.Tensor, got {type(ours).__name__}")
    problems = []
    if str(ours.dtype).split(".")[-1] != str(theirs.dtype).split(".")[-1]:
        problems.append(f"dtype {ours.dtype} != {theirs.dtype}")
    if tuple(ours.shape) != tuple(theirs.shape):
        problems.append(f"shape {tuple(ours.shape)} != {tuple(theirs.shape)}")
    if exact_layout and tuple(ours.stride()) != tuple(theirs.stride()):
        problems.append(f"stride {ours.stride()} != {theirs.stride()}")
    if exact_layout and ours.storage_offset() != theirs.storage_offset():
        problems.append(f"storage_offset {ours.storage_offset()} != {theirs.storage_offset()}")
    if problems:
        raise AssertionError("internals and torch differ: " + "; ".join(problems))
    got, expected = ours.to_torch(), theirs.detach().cpu()
    if _identical(got, expected):
        pass        # equal values pass either comparison below: skip their cost (~0.1 ms a call)
    elif ulps is not None:
        assert_within_ulps(got, expected, ulps)
    else:
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    return (f"ok: shape {list(ours.shape)}, stride {list(ours.stride())}, offset {ours.storage_offset()}, "
            f"{ours.dtype.name}, values match")


def _identical(got, expected):
    """Same dtype, shape and values (``torch.equal``: -0.0 equals 0.0, NaN equals nothing), two
    plain strided tensors without a pending conjugation or negation: then ``assert_close`` and
    ``assert_within_ulps`` accept the pair whatever their tolerances, and need not be run."""
    import torch  # torch is heavy: only a comparison with it needs it
    plain = all(t.layout is torch.strided and not t.is_conj() and not t.is_neg() for t in (got, expected))
    return plain and got.dtype == expected.dtype and got.shape == expected.shape and torch.equal(got, expected)


def check_all(pairs, what="results", **kwargs):
    """``check`` every (ours, theirs) pair; return one confirmation line for the group."""
    pairs = list(pairs)
    for ours, theirs in pairs:
        check(ours, theirs, **kwargs)
    return f"ok: all {len(pairs)} {what} match torch (shape, stride, offset, dtype, values)"


def check_views(named, **kwargs):
    """``check`` every ``name: (ours, theirs)`` of ``named``; return a table of their sizes,
    strides, offsets and dtypes, and one confirmation line for the group."""
    rows = []
    for name, (ours, theirs) in named.items():
        check(ours, theirs, **kwargs)
        rows.append((name, list(ours.shape), list(ours.stride()), ours.storage_offset(), ours.dtype.name))
    return (table(rows, ("", "sizes", "strides", "offset", "dtype"))
            + "\nok: torch agrees on every row (shape, stride, offset, dtype, values)")


def _ulp_of(expected):
    """The spacing of ``expected``'s dtype at each value (in float64): eps scaled to the value's
    binade, and the subnormal spacing below the smallest normal number. A complex number's two
    parts take the spacing of the larger one, as a rounding error of a complex product is
    relative to the whole number, not to a part that cancelled to almost nothing."""
    import torch  # torch is heavy: only a comparison with it needs it
    magnitude = expected.abs()
    if expected.is_complex():      # an infinite part is compared exactly; the finite one by itself
        parts = torch.view_as_real(expected.resolve_conj()).abs()
        parts = torch.where(torch.isfinite(parts), parts, 0)
        magnitude = torch.maximum(parts[..., 0], parts[..., 1])
    info = torch.finfo(magnitude.dtype)
    _, exponent = torch.frexp(magnitude.to(torch.float64))
    binade = torch.ldexp(torch.ones_like(exponent, dtype=torch.float64), exponent - 1)
    spacing = info.eps * torch.clamp(binade, min=info.tiny)
    return spacing.unsqueeze(-1) if expected.is_complex() else spacing


def assert_within_ulps(got, expected, ulps):
    """``got`` is ``expected`` (torch's) within ``ulps`` units in the last place of ``expected``'s
    dtype: same dtype and shape, NaN and infinities at the same places, integers and booleans
    equal. Anything convertible by ``torch.as_tensor`` is accepted (nested lists: same dtype assumed)."""
    import torch  # torch is heavy: only a comparison with it needs it
    got, expected = torch.as_tensor(got), torch.as_tensor(expected)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        raise AssertionError(f"dtype/shape {got.dtype} {tuple(got.shape)} != {expected.dtype} {tuple(expected.shape)}")
    if not (expected.is_floating_point() or expected.is_complex()):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
        return
    ulp = _ulp_of(expected)
    if expected.is_complex():
        got, expected = torch.view_as_real(got.resolve_conj()), torch.view_as_real(expected.resolve_conj())
    finite = torch.isfinite(expected)
    same_special = torch.isnan(got) == torch.isnan(expected)
    same_special &= torch.where(finite | torch.isnan(expected), torch.isfinite(got) | torch.isnan(got), got == expected)
    if not same_special.all():
        where = tuple(torch.nonzero(~same_special)[0].tolist())
        raise AssertionError(f"non-finite values differ at {where}: {got[where].item()} != {expected[where].item()}")
    apart = torch.where(finite, (got.to(torch.float64) - expected.to(torch.float64)).abs() / ulp, 0.0)
    if apart.numel() and apart.max() > ulps:
        where = tuple(torch.nonzero(apart == apart.max())[0].tolist())
        raise AssertionError(f"values {apart.max().item():.3g} ulps apart (at most {ulps}) at {where}: "
                             f"{got[where].item()!r} != {expected[where].item()!r}")
