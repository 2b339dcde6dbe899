"""The stride map: which storage cell each element of a strided view reads.

A view is sizes, strides and a storage offset over a flat storage (``c10/core/TensorImpl.h``):
element ``[i, j]`` lives at ``offset + i * strides[0] + j * strides[1]``. ``stride_map`` draws the
storage as a row of cells and the view as a grid below it; each element is labelled and coloured
by the storage cell it maps to. It works from the numbers alone, so it can also draw a view that
``as_strided`` would refuse: elements past the end of the storage are drawn in red.

``memory_order_map`` draws a 4-d N, C, H, W tensor the same way, coloured by channel, to show the
order in which memory holds its elements: plane after plane for the contiguous (NCHW) format,
all the channels of one pixel after another for ``channels_last`` (NHWC).
"""
import itertools
from collections import Counter

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

__all__ = ["stride_map", "storage_indices", "memory_order_map"]

_CMAP = "viridis"        # colour = position in storage: a contiguous view reads as one smooth sweep
_UNUSED = "#eeeeee"      # storage cells the view never reads
_OUT = "#d62728"         # elements past the end of the storage
_CHANNELS = "tab10"      # one colour per channel in memory_order_map
_GAP = 1.3               # vertical space between the storage row and the view's grid


def storage_indices(sizes, strides, offset):
    """``{index tuple: storage index}`` for every element, in row-major order."""
    return {idx: offset + sum(i * s for i, s in zip(idx, strides))
            for idx in itertools.product(*(range(n) for n in sizes))}


def _cell(ax, x, y, text, face, *, edge="black", text_color="black", style="solid", size=9):
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=face, edgecolor=edge, linestyle=style, linewidth=1))
    ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", color=text_color, fontsize=size)


def _text_color(rgba):
    """Black on light cells, white on dark ones."""
    r, g, b, _ = rgba
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def stride_map(sizes, strides, offset, storage_size, ax=None, *, title=None):
    """Draw a 1-d or 2-d view (``sizes``, ``strides``, ``offset``) over ``storage_size`` elements.

    Top row: the storage, one cell per element, numbered; cells the view reads are coloured, and
    a cell read more than once (stride 0) is marked with its count. Below: the view, each element
    showing the storage index it reads, in that cell's colour. Elements past the end of the
    storage are drawn dashed, in red. ``title`` replaces the default one (sizes, strides, offset).
    Draws into ``ax`` if given, else into a new figure sized to fit; returns the Axes.
    """
    sizes, strides = tuple(int(n) for n in sizes), tuple(int(s) for s in strides)
    if len(sizes) != len(strides):
        raise ValueError(f"sizes {list(sizes)} and strides {list(strides)} differ in length")
    if len(sizes) not in (1, 2):
        raise ValueError(f"stride_map draws 1-d and 2-d views, got {len(sizes)} dimensions")
    if title is None:
        title = f"sizes {list(sizes)}, strides {list(strides)}, offset {offset}"
    one_d = len(sizes) == 1
    if one_d:                                # a 1-d view is drawn as a single row
        sizes, strides = (1,) + sizes, (0,) + strides
    where = storage_indices(sizes, strides, offset)
    reads = Counter(where.values())
    outside = any(k >= storage_size for k in reads)
    rows, cols = sizes
    width = max(storage_size + outside, cols, 1)
    left, bottom, top_edge = -2.6, -_GAP - rows - 0.8, 2.0      # the drawing's extent, in cells
    if ax is None:
        _, ax = plt.subplots(figsize=(0.4 * (width - left), 0.4 * (top_edge - bottom) + 0.3))
    cmap = plt.get_cmap(_CMAP)

    def colour(k):
        return cmap(k / max(storage_size - 1, 1))

    # The storage row.
    for k in range(storage_size):
        if reads[k]:
            _cell(ax, k, 0, str(k), colour(k), text_color=_text_color(colour(k)))
        else:
            _cell(ax, k, 0, str(k), _UNUSED, edge="#999999", text_color="#999999")
        if reads[k] > 1:
            ax.text(k + 0.5, 1.12, f"×{reads[k]}", ha="center", va="bottom", fontsize=7)
    if outside:
        _cell(ax, storage_size, 0, "…", "white", edge=_OUT, text_color=_OUT, style="dashed")
        ax.text(storage_size + 0.5, 1.12, "past\nthe end", ha="center", va="bottom", fontsize=7, color=_OUT)
    ax.text(-0.3, 0.5, "storage", ha="right", va="center", fontsize=9)
    if rows * cols and 0 <= offset < width:
        ax.annotate("offset", xy=(offset + 0.5, -0.02), xytext=(offset + 0.5, -_GAP + 0.45),
                    ha="center", va="center", fontsize=7.5, arrowprops=dict(arrowstyle="->", lw=0.8))

    # The view's grid: row i at the top, element [i, j] labelled with its storage index.
    top = -_GAP
    for (i, j), k in where.items():
        y = top - 1 - i
        if k < storage_size:
            _cell(ax, j, y, str(k), colour(k), text_color=_text_color(colour(k)))
        else:
            _cell(ax, j, y, str(k), "white", edge=_OUT, text_color=_OUT, style="dashed")
    for i in range(0 if one_d else rows):
        ax.text(-0.15, top - 0.5 - i, str(i), ha="right", va="center", fontsize=7.5, color="#666666")
    for j in range(cols):
        ax.text(j + 0.5, top - rows - 0.15, str(j), ha="center", va="top", fontsize=7.5, color="#666666")
    ax.text(-0.9, top - rows / 2, "view", ha="right", va="center", fontsize=9)
    if rows * cols == 0:
        ax.text(0, top - 0.5, "(empty view)", va="center", fontsize=9, color="#666666")

    ax.set_title(title, fontsize=10)
    ax.set_xlim(left, width + 0.2)
    ax.set_ylim(bottom, top_edge)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def memory_order_map(sizes, strides, offset=0, ax=None, *, title=None):
    """Draw a 4-d N, C, H, W tensor (``sizes``, ``strides``, ``offset``) as memory holds it.

    Top row: the storage in memory order, each cell numbered and coloured by the channel of the
    element stored there (grey where none is). Below: the tensor as N rows of C planes of H x W,
    each element showing the storage index it reads, in its channel's colour. Draws into ``ax``
    if given, else into a new figure sized to fit; returns the Axes.
    """
    sizes, strides = tuple(int(n) for n in sizes), tuple(int(s) for s in strides)
    if len(sizes) != 4 or len(strides) != 4:
        raise ValueError(f"memory_order_map draws 4-d (N, C, H, W) tensors, got sizes {list(sizes)} "
                         f"and strides {list(strides)}")
    n_images, channels, height, width = sizes
    where = storage_indices(sizes, strides, offset)
    channel_at = {k: index[1] for index, k in where.items()}
    span = max(channel_at, default=-1) + 1
    columns = max(span, channels * (width + 1) - 1, 1)
    bottom = -_GAP - n_images * (height + 1) - 0.2
    if ax is None:
        _, ax = plt.subplots(figsize=(0.4 * (columns + 2.8), 0.4 * (2.2 - bottom) + 0.3))
    cmap = plt.get_cmap(_CHANNELS)

    def cell(x, y, k, c):
        _cell(ax, x, y, str(k), cmap(c), text_color=_text_color(cmap(c)), size=8)

    for k in range(span):                            # the storage row
        if k in channel_at:
            cell(k, 0, k, channel_at[k])
        else:
            _cell(ax, k, 0, str(k), _UNUSED, edge="#999999", text_color="#999999", size=8)
    ax.text(-0.3, 0.5, "storage", ha="right", va="center", fontsize=9)
    for (n, c, h, w), k in where.items():            # plane (n, c): one H x W grid
        cell(c * (width + 1) + w, -_GAP - 1 - n * (height + 1) - h, k, c)
    for c in range(channels):
        ax.text(c * (width + 1) + width / 2, -_GAP + 0.1, f"channel {c}", ha="center", va="bottom",
                fontsize=8, color=cmap(c))
    for n in range(n_images):
        ax.text(-0.3, -_GAP - n * (height + 1) - height / 2, f"image {n}", ha="right", va="center", fontsize=9)
    ax.set_title(title or f"sizes {list(sizes)}, strides {list(strides)}", fontsize=10)
    ax.set_xlim(-2.8, columns + 0.2)
    ax.set_ylim(bottom, 2.0)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax
