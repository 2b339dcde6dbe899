"""The tiled matrix multiply, drawn: which tiles one block of threads loads, step by step.

The CUDA matmul (``aten/native/cuda/linalg.py``; in PyTorch, cuBLAS does this with far more
refinement) gives each block of threads one ``tile x tile`` tile of the output. The block walks
along K: at step s it loads tile s of its band of rows of ``a`` and tile s of its band of columns
of ``w`` into shared memory, multiplies them, and adds the product to its tile of the output.
``tile_steps`` lists those tiles; ``tile_map`` draws them on the three matrices.
"""
import math

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

__all__ = ["tile_steps", "tile_map"]

_CMAP = "viridis"       # colour = step along K
_IDLE = "#f2f2f2"       # elements the block never loads


def tile_steps(M, N, K, tile, block):
    """The steps of output block ``block = (bi, bj)``: a list of ``(rows, ks, cols)`` ranges.

    Step s multiplies ``a[rows, ks]`` by ``w[ks, cols]``; the sum over the steps is
    ``(a @ w)[rows, cols]``. Ranges are clipped to the matrices, as the kernel's bounds checks
    clip them (it loads zeros past the edges).
    """
    bi, bj = block
    if not (0 <= bi < math.ceil(M / tile) and 0 <= bj < math.ceil(N / tile)):
        raise ValueError(f"block {block} is outside the grid of {tile}x{tile} tiles over a {M}x{N} output")
    rows = range(bi * tile, min((bi + 1) * tile, M))
    cols = range(bj * tile, min((bj + 1) * tile, N))
    return [(rows, range(k0, min(k0 + tile, K)), cols) for k0 in range(0, K, tile)]


def _matrix(ax, height, width, tile, title):
    """An empty ``height x width`` grid of elements with bold lines between tiles."""
    for i in range(height):
        for j in range(width):
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=_IDLE, edgecolor="white", linewidth=0.5))
    for x in range(0, width + 1, tile):
        ax.plot([x, x], [0, height], color="black", linewidth=1.2)
    for y in range(0, height + 1, tile):
        ax.plot([0, width], [y, y], color="black", linewidth=1.2)
    ax.plot([width, width], [0, height], color="black", linewidth=1.2)
    ax.plot([0, width], [height, height], color="black", linewidth=1.2)
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(height + 0.2, -0.2)      # row 0 at the top, as a matrix is written
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=11)


def _block(ax, rows, cols, color, label):
    ax.add_patch(Rectangle((cols.start, rows.start), len(cols), len(rows), facecolor=color,
                           edgecolor="black", linewidth=1.2, alpha=0.85))
    ax.text(cols.start + len(cols) / 2, rows.start + len(rows) / 2, label, ha="center", va="center",
            fontsize=11, color="white" if sum(color[:3]) < 1.5 else "black")


def tile_map(M, N, K, tile, block, *, title=None):
    """Draw ``a`` (M x K), ``w`` (K x N) and ``out`` (M x N) cut into ``tile x tile`` tiles.

    The tiles output block ``block`` loads are coloured by step (the label is the step number):
    its band of rows of ``a`` and its band of columns of ``w``; its own tile of ``out`` is marked
    with the number of steps summed into it. Returns the figure.
    """
    steps = tile_steps(M, N, K, tile, block)
    cmap = plt.get_cmap(_CMAP)
    colors = [cmap(0.15 + 0.7 * s / max(1, len(steps) - 1)) for s in range(len(steps))]
    widths = [K, N, N]
    fig, axes = plt.subplots(1, 3, figsize=(1.0 + 0.22 * sum(widths), 1.3 + 0.22 * max(M, K)),
                             gridspec_kw={"width_ratios": widths})
    a_ax, w_ax, out_ax = axes
    _matrix(a_ax, M, K, tile, f"a ({M} x {K})")
    _matrix(w_ax, K, N, tile, f"w ({K} x {N})")
    _matrix(out_ax, M, N, tile, f"out ({M} x {N})")
    for s, (rows, ks, cols) in enumerate(steps):
        _block(a_ax, rows, ks, colors[s], f"{s}")
        _block(w_ax, ks, cols, colors[s], f"{s}")
    rows, _, cols = steps[0]
    _block(out_ax, rows, cols, cmap(0.95), f"sum of\n{len(steps)} steps")
    fig.suptitle(title or f"block {tuple(block)}: {len(steps)} steps of {tile}x{tile} tiles along K", fontsize=12)
    fig.tight_layout()
    return fig
