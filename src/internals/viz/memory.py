"""The segment map: what the CUDA caching allocator holds, segment by segment (chapter 7).

Drawn from ``internals.cuda.memory_snapshot()`` (torch's ``torch.cuda.memory_snapshot()`` has the
same keys), like the "segments" view of torch's memory visualizer (``torch/cuda/_memory_viz.py``):
one horizontal bar per segment, as long as the segment, split into its blocks. An allocated block
gets a colour of its own; a free block, cached by the allocator but handed to no tensor, is grey.
Lengths are proportional to bytes, except that an allocated block too small to see (a 512-byte
block in a 20 MiB picture) is drawn a little wider, over its free neighbour.
Nothing depends on an address except which block is which: positions are offsets within the
segment, and rows are ordered by pool, then size, so a picture does not change from run to run.
"""
import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from ..cuda import memory_snapshot
from ..cuda.caching_allocator import format_size

__all__ = ["segment_map", "segment_timeline", "active_allocations", "memory_timeline"]

MiB = 1024**2
_FREE = "#d9d9d9"     # cached, not handed out
_PALETTE = "tab10"    # one colour per allocation, in the order they first appear
_HEIGHT = 0.6         # a bar's height, in rows
_MIN_TEXT = 0.08      # a block gets its text only if it is wider than this fraction of the axis
_MIN_WIDTH = 0.01     # an allocated block is drawn at least this fraction of the axis wide


def _ordered(snapshot):
    """Segments large pool first, then by size (largest first); address only breaks ties."""
    return sorted(snapshot, key=lambda s: (s["segment_type"] != "large", -s["total_size"], s["address"]))


class _Colours:
    """A colour per allocation, stable across the panels of a timeline.

    A labelled block is known by its label (``x`` keeps its colour wherever it lives); an
    unlabelled one by its address and size.
    """

    def __init__(self):
        self.keys = {}
        self.cmap = plt.get_cmap(_PALETTE)

    def __call__(self, key):
        index = self.keys.setdefault(key, len(self.keys))
        return self.cmap(index % self.cmap.N)


def _draw(ax, snapshot, labels, colours, width):
    """Draw the segments of ``snapshot`` into ``ax`` with an x axis ``width`` bytes long."""
    segments = _ordered(snapshot)
    n = len(segments)
    for row, segment in enumerate(segments):
        y = n - 1 - row   # first segment at the top
        offset = 0
        for block in segment["blocks"]:
            allocated = block["state"] == "active_allocated"
            label = labels.get(block["address"]) if allocated else None
            drawn = block["size"]
            if allocated:
                face = colours(label if label is not None else (block["address"], block["size"]))
                drawn = max(drawn, _MIN_WIDTH * width)   # a 512-byte block must still be seen
            ax.add_patch(Rectangle((offset / MiB, y - _HEIGHT / 2), drawn / MiB, _HEIGHT,
                                   facecolor=face if allocated else _FREE, edgecolor="white", linewidth=0.8,
                                   zorder=2 if allocated else 1))
            if block["size"] / width > _MIN_TEXT:
                size = format_size(block["size"])
                text = f"{label}\n{size}" if label else size if allocated else f"free\n{size}"
                ax.text((offset + block["size"] / 2) / MiB, y, text, ha="center", va="center", fontsize=7.5,
                        zorder=3)
            offset += block["size"]
        ax.add_patch(Rectangle((0, y - _HEIGHT / 2), segment["total_size"] / MiB, _HEIGHT,
                               fill=False, edgecolor="black", linewidth=1.2, zorder=4))
        if segment.get("is_expandable"):   # the mapped pages: 2 MiB (small pool) or 20 MiB (large)
            page = 2 * MiB if segment["segment_type"] == "small" else 20 * MiB
            for edge in range(page, segment["total_size"], page):
                ax.plot([edge / MiB] * 2, [y - _HEIGHT / 2, y + _HEIGHT / 2], color="black", linestyle=":",
                        linewidth=1.2, zorder=4)
    ax.set_yticks(range(n - 1, -1, -1),
                  [f"{format_size(s['total_size'])}\n{s['segment_type']} pool"
                   + ("\n(expandable)" if s.get("is_expandable") else "") for s in segments], fontsize=8)
    ax.set_ylim(-0.6, max(n, 1) - 0.4)
    ax.set_xlim(0, width / MiB)
    ax.set_xlabel("offset in segment (MiB)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.spines[["top", "right", "left"]].set_visible(False)
    ax.tick_params(axis="y", length=0)
    if n == 0:
        ax.text(0.5, 0.5, "no segments: nothing reserved", transform=ax.transAxes,
                ha="center", va="center", fontsize=9, color="#666666")


def _legend_handles():
    return [Patch(facecolor=plt.get_cmap(_PALETTE)(0), label="allocated block (a colour per allocation)"),
            Patch(facecolor=_FREE, label="free block, cached by the allocator"),
            Patch(fill=False, edgecolor="black", label="segment (one cudaMalloc)")]


def _width(snapshots):
    return max((s["total_size"] for snapshot in snapshots for s in snapshot), default=2 * MiB)


def segment_map(snapshot=None, ax=None, *, title=None, labels=None):
    """Draw every segment of ``snapshot`` (default: ``internals.cuda.memory_snapshot()``).

    ``labels`` maps a block's address (a tensor's ``data_ptr()``) to the name written in it; the
    addresses themselves are never shown. Returns the Axes.
    """
    if snapshot is None:
        snapshot = memory_snapshot()
    own_figure = ax is None
    if own_figure:
        fig, ax = plt.subplots(figsize=(9, 1.1 + 0.55 * max(len(snapshot), 1)), layout="constrained")
    _draw(ax, snapshot, labels or {}, _Colours(), _width([snapshot]))
    if title is not None:
        ax.set_title(title, fontsize=10, loc="left")
    if own_figure:
        fig.legend(handles=_legend_handles(), fontsize=8, frameon=False, loc="outside lower center", ncols=3)
    else:
        ax.legend(handles=_legend_handles(), fontsize=7, loc="lower right")
    return ax


def segment_timeline(steps, *, labels=None):
    """Small multiples: one panel per ``(title, snapshot)`` step, top to bottom, on one x scale.

    ``labels`` maps an address to a name for every step, or is a list with one such dict per step
    (an address freed at one step may belong to another tensor at the next). An allocation keeps
    its colour from panel to panel. Returns the Figure.
    """
    steps = list(steps)
    if not steps:
        raise ValueError("segment_timeline needs at least one (title, snapshot) step")
    per_step = labels if isinstance(labels, list) else [labels or {}] * len(steps)
    if len(per_step) != len(steps):
        raise ValueError(f"{len(per_step)} label dicts for {len(steps)} steps")
    rows = [max(len(snapshot), 1) for _, snapshot in steps]
    fig, axes = plt.subplots(len(steps), 1, sharex=True, squeeze=False, height_ratios=rows,
                             figsize=(9, 0.7 * len(steps) + 0.55 * sum(rows) + 0.5), layout="constrained")
    colours, width = _Colours(), _width([snapshot for _, snapshot in steps])
    for ax, (title, snapshot), step_labels in zip(axes[:, 0], steps, per_step):
        _draw(ax, snapshot, step_labels, colours, width)
        ax.set_title(title, fontsize=9, loc="left")
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("")
    axes[-1, 0].set_xlabel("offset in segment (MiB)", fontsize=8)
    fig.legend(handles=_legend_handles(), fontsize=8, frameon=False, loc="outside lower center", ncols=3)
    return fig


def active_allocations(trace):
    """Replay a recorded trace: one ``[start, end, size]`` per allocation, in allocation order.

    ``start`` and ``end`` are event indices (``end`` is None for an allocation still alive);
    ``size`` is the requested size, as the alloc entry records it.
    """
    spans, live = [], {}
    for index, entry in enumerate(trace):
        if entry["action"] == "alloc":
            live[entry["addr"]] = len(spans)
            spans.append([index, None, entry["size"]])
        elif entry["action"] == "free_completed" and entry["addr"] in live:
            spans[live.pop(entry["addr"])][1] = index
    return spans


def memory_timeline(trace, ax=None, *, title=None, labels=None):
    """The "Active Memory Timeline" of torch's visualizer, drawn from ``_snapshot()["device_traces"][0]``.

    Every allocation is a band as thick as its size, from its alloc event to its free, stacked in
    allocation order (a band above a freed one drops down, as in torch's picture); the step line
    is reserved memory, from the segment events. ``labels`` names the allocations in order.
    Returns the Axes.
    """
    spans = active_allocations(trace)
    steps = len(trace) + 1   # one point past the last event, so the last step has a width
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
    alive = [[size / MiB if start <= t and (end is None or t < end) else 0 for t in range(steps)]
             for start, end, size in spans]
    colours = _Colours()
    names = list(labels or [])
    ax.stackplot(range(steps), alive, step="post", colors=[colours(i) for i in range(len(spans))],
                 labels=names + [None] * (len(spans) - len(names)), edgecolor="white", linewidth=0.4)
    reserved, total = [], 0
    for entry in trace:
        total += {"segment_alloc": entry["size"], "segment_free": -entry["size"]}.get(entry["action"], 0)
        reserved.append(total / MiB)
    reserved.append(total / MiB)
    ax.step(range(steps), reserved, where="post", color="black", linewidth=1.2, label="reserved")
    ax.set_ylim(0, 1.1 * max(reserved + [sum(col) for col in zip(*alive)] + [1e-9]))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("allocator event", fontsize=8)
    ax.set_ylabel("MiB", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_xlim(0, steps - 1)
    ax.spines[["top", "right"]].set_visible(False)
    if title is not None:
        ax.set_title(title, fontsize=10, loc="left")
    ax.legend(fontsize=7.5, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax
