"""What one item of each sparse loop does, written once (``register_jitable``): the CPU loops in
``cpu/kernels.py`` hand these an item of their ``prange``, the CUDA kernels in
``cuda/kernels.py`` one of their grid-stride loop, as ``scan_ops`` serves the scans.

The buffers and their layouts are described in ``cpu/kernels.py``'s docstring.
"""
from numba.extending import register_jitable


@register_jitable
def nonzero_row(p, flags, x, D):
    """flags[p] = 1 if row p of the dense ``x`` holds any nonzero (NaN counts: it is not zero)."""
    found = 0
    for e in range(D):
        if x[p * D + e] != 0:
            found = 1
            break
    flags[p] = found


@register_jitable
def gather_row(p, indices, values, x, flags, positions, sizes, D, nnz):
    """Entry ``positions[p]`` <- row p of ``x``, if it is flagged: its coordinates (p unravelled
    over ``sizes``, row-major) and its block of values."""
    if flags[p]:
        j = positions[p]
        rest = p
        for d in range(sizes.size - 1, -1, -1):
            indices[d * nnz + j] = rest % sizes[d]
            rest //= sizes[d]
        for e in range(D):
            values[j * D + e] = x[p * D + e]


@register_jitable
def linear_index_of(j, out, indices, sizes, nnz):
    """out[j] = the row-major position of entry j's coordinates in a tensor of ``sizes``."""
    position = 0
    for d in range(sizes.size):
        position = position * sizes[d] + indices[d * nnz + j]
    out[j] = position


@register_jitable
def merge_segment(s, out_indices, out_values, indices, values, perm, starts, S, D, nnz):
    """Coalesce's merge: output entry s sums the input entries ``perm[starts[s]:starts[s + 1]]``
    (one coordinate, in their input order) and takes their coordinates."""
    count = starts.size - 1
    first = perm[starts[s]]
    for d in range(S):
        out_indices[d * count + s] = indices[d * nnz + first]
    for e in range(D):
        out_values[s * D + e] = values[first * D + e]
        for k in range(starts[s] + 1, starts[s + 1]):
            out_values[s * D + e] += values[perm[k] * D + e]


@register_jitable
def scatter_row(j, out, values, rows, D):
    """out[rows[j]] = values[j], block by block; the rows are distinct (a coalesced input)."""
    for e in range(D):
        out[rows[j] * D + e] = values[j * D + e]


@register_jitable
def row_pointers_at(k, row_ptr, rows, nnz, M):
    """Boundary k of sorted row indices (between entries k - 1 and k) starts every row after the
    previous entry's row up to entry k's row: each CSR row pointer is written by one boundary."""
    previous = rows[k - 1] if k > 0 else -1
    current = rows[k] if k < nnz else M
    for r in range(previous + 1, current + 1):
        row_ptr[r] = k
