"""Kernels drawn: how ``TensorIterator.build()`` lays out a loop, and the tiles a CUDA matmul loads.

``build_steps`` lists the steps ``TensorIterator.build()`` (``aten/tensor_iterator.py``) calls,
read from its source, and ``build_map`` draws them in order. ``trace_build`` runs a real
``build()`` and keeps the iterator's state after each step; ``layout_steps`` takes from it the
operands' sizes and strides before reordering, after reordering and after coalescing, and
``layout_map`` draws those three stages side by side.

The CUDA matmul (``aten/native/cuda/linalg.py``; in PyTorch, cuBLAS does this with far more
refinement) gives each block of threads one ``tile x tile`` tile of the output. The block walks
along K: at step s it loads tile s of its band of rows of ``a`` and tile s of its band of columns
of ``w`` into shared memory, multiplies them, and adds the product to its tile of the output.
``tile_steps`` lists those tiles; ``tile_map`` draws them on the three matrices.
"""
import inspect
import math
import re

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Rectangle

from ..aten.tensor_iterator import TensorIterator

__all__ = ["build_steps", "build_map", "trace_build", "layout_steps", "layout_map", "tile_steps", "tile_map"]

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


# ---------------------------------------------------------------- TensorIterator.build(), drawn
_SKIPPED_BY_FAST = ("compute_strides", "reorder_dimensions", "allocate_or_resize_outputs")


def build_steps():
    """The methods ``TensorIterator.build()`` calls, in the order its source calls them."""
    return re.findall(r"self\.(\w+)\(\)", inspect.getsource(TensorIterator.build))


def trace_build(config):
    """Build ``config``'s iterator, noting each step it runs: returns the iterator and a list of
    ``(step, state)``, ``state`` being the iterator's attributes just after that step."""
    it, trace = TensorIterator(config), []

    def traced(name, method):
        def run():
            result = method()
            state = {k: getattr(it, k, None) for k in ("shape", "perm", "output_strides", "fast", "geometry")}
            state["operand_strides"] = getattr(it, "operand_strides", None)
            state["out_strides"] = None if it.outputs[0] is None else it.outputs[0].stride()
            trace.append((name, state))
            return result
        return run

    for name in build_steps():
        setattr(it, name, traced(name, getattr(it, name)))     # an instance attribute shadows the method
    return it.build(), trace


def layout_steps(config):
    """The three stages of the loop's layout for a (non-reduction) ``config``, each a dict with
    ``sizes`` (loop order) and ``strides`` (one list per operand, output first; ``None`` for an
    output not yet allocated), from a traced ``build()``:

    - ``"compute_strides"``: the tensors' own dim order, inputs' strides over the broadcast shape;
    - ``"reorder_dimensions"``: dims permuted by ``perm``, fastest first, and the output as
      ``allocate_or_resize_outputs`` then lays it out;
    - ``"coalesce_dimensions"``: the loop's geometry.

    Strides are in elements. An iterator that took ``fast_set_up`` has no reorder stage: one
    flat loop is all it needs; its stages are the first and the last.
    """
    it, trace = trace_build(config)
    states = dict(trace)
    shape = list(it.shape)
    inputs = states.get("compute_strides", {}).get("operand_strides")
    if inputs is None:          # fast_set_up: every input has the shape, strides as they are
        inputs = [list(i.stride()) for i in it.config.inputs]
    stages = {"compute_strides": {"sizes": shape, "strides": [None] + [list(s) for s in inputs]}}
    if "reorder_dimensions" in states:
        perm = states["reorder_dimensions"]["perm"]
        out = list(it.result.stride())
        stages["reorder_dimensions"] = {"sizes": [shape[d] for d in perm], "perm": list(perm),
                                        "strides": [[s[d] for d in perm] for s in [out] + inputs]}
    g = states["coalesce_dimensions"]["geometry"]
    stages["coalesce_dimensions"] = {"sizes": g.shape.tolist(), "strides": g.strides.tolist()}
    return stages


_STAGE_TITLES = {"compute_strides": "before reorder\n(the tensors' own dim order)",
                 "reorder_dimensions": "after reorder_dimensions\n(fastest dim first)",
                 "coalesce_dimensions": "after coalesce_dimensions\n(the loop)"}


def _stage(ax, stage, names, title):
    """One stage: a column per dim, a row per operand, each cell the operand's stride there."""
    sizes, rows = stage["sizes"], stage["strides"]
    ax.text(-0.15, -0.45, "size", ha="right", va="center", fontsize=9, style="italic")
    for d, size in enumerate(sizes):
        ax.text(d + 0.5, -0.45, str(size), ha="center", va="center", fontsize=10, weight="bold")
        ax.text(d + 0.5, len(rows) + 0.3, f"dim {d}", ha="center", va="center", fontsize=7.5, color="#555555")
        for k, strides in enumerate(rows):
            unit = strides is not None and strides[d] == 1
            face = "#9ecae1" if unit else ("#f2f2f2" if strides is None else "white")
            ax.add_patch(Rectangle((d, k), 1, 1, facecolor=face, edgecolor="black", linewidth=0.8))
            ax.text(d + 0.5, k + 0.5, "?" if strides is None else str(strides[d]), ha="center",
                    va="center", fontsize=10, color="#888888" if strides is None else "black")
    for k, name in enumerate(names):
        ax.text(-0.15, k + 0.5, name, ha="right", va="center", fontsize=9)
    ax.set_xlim(-1.0, max(len(sizes), 1) + 0.1)
    ax.set_ylim(len(names) + 0.6, -0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=9)


def layout_map(config, names=None, *, title=None):
    """Draw ``layout_steps(config)``: the operands' strides (in elements) along each dim, before
    reordering, after it and after coalescing; cells of stride 1 are shaded, and "?" marks the
    output before it is allocated. ``names`` label the operands (output first). Returns the figure.
    """
    stages = layout_steps(config)
    count = len(stages["compute_strides"]["strides"])
    names = names or ["out"] + [f"input {k}" for k in range(1, count)]
    widths = [len(s["sizes"]) + 1.1 for s in stages.values()]
    fig, axes = plt.subplots(1, len(stages), figsize=(1.0 + 0.72 * sum(widths), 1.4 + 0.55 * count),
                             gridspec_kw={"width_ratios": widths})
    for ax, (step, stage) in zip(axes, stages.items()):
        label = _STAGE_TITLES[step]
        if "perm" in stage:
            label += f"\nperm {stage['perm']}"
        _stage(ax, stage, names, label)
    fig.suptitle(title or "TensorIterator.build(): strides, in elements, per operand and dim", fontsize=10)
    fig.tight_layout()
    return fig


def build_map(taken=None):
    """Draw ``build_steps()`` as a row of boxes, in order. ``fast_set_up`` is marked as the branch
    it is: when it succeeds, the three steps after it are skipped. With ``taken`` (the steps one
    ``trace_build`` ran), the steps that did not run are greyed. Returns the figure."""
    steps = build_steps()
    fig, ax = plt.subplots(figsize=(7.0, 0.8 + 0.34 * len(steps)))
    for i, step in enumerate(steps):
        ran = taken is None or step in taken
        face = "#fdd49e" if step == "fast_set_up" else ("#c6dbef" if step in _SKIPPED_BY_FAST else "#e5e5e5")
        y = i * 0.9
        ax.add_patch(FancyBboxPatch((0, y), 4.2, 0.6, boxstyle="round,pad=0.05", linewidth=0.8,
                                    facecolor=face if ran else "white", edgecolor="black" if ran else "#aaaaaa"))
        ax.text(2.1, y + 0.3, f"{i + 1}. {step}", ha="center", va="center", fontsize=9,
                color="black" if ran else "#999999")
        if i:
            ax.annotate("", xy=(2.1, y - 0.05), xytext=(2.1, y - 0.25), arrowprops={"arrowstyle": "->"})
    fast, last = steps.index("fast_set_up"), steps.index(_SKIPPED_BY_FAST[-1])
    ax.annotate("", xy=(4.3, (last + 1) * 0.9 + 0.3), xytext=(4.3, fast * 0.9 + 0.3),
                arrowprops={"arrowstyle": "->", "connectionstyle": "bar,fraction=0.1", "color": "#d94801"})
    note = "one shared dense\nlayout: 5 to 7\nskipped (fast_set_up\nallocates itself)"
    ax.text(4.75, (fast + last + 1) * 0.45 + 0.3, note, ha="left", va="center", fontsize=8.5, color="#d94801")
    ax.text(-0.2, (fast + last) * 0.45 + 0.75, "no shared\nlayout", ha="right", va="center",
            fontsize=8.5, color="#2171b5")
    ax.set_xlim(-1.6, 7.4)
    ax.set_ylim(len(steps) * 0.9, -0.3)
    ax.axis("off")
    ax.set_title("TensorIterator.build(), in order", fontsize=10)
    fig.tight_layout()
    return fig
