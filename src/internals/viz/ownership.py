"""Who refers to whom under a set of tensors (chapter 3): Python object -> TensorImpl ->
StorageImpl -> bytes, with views and NumPy arrays pointing in.

``ownership_layout`` inspects the objects it is given: each tensor is a Python object holding its
own TensorImpl (sizes, strides, offset); tensors whose ``untyped_storage()`` is one StorageImpl
share one storage box; each storage owns one block of bytes, found by its data pointer. A NumPy
array points straight at the bytes its data pointer falls in (at an offset), and keeps alive the
tensor in its ``base`` (torch's is a tensor of its own on the same storage, drawn as ``n.base``;
internals' is the tensor itself); a view keeps its ``_base`` alive. It reads only public attributes (and
torch's ``_cdata``, the StorageImpl's address, to tell storages apart), so the same program lays
out the same with torch and with internals. ``ownership_map`` draws it. No address is shown.
"""
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

__all__ = ["ownership_layout", "ownership_map"]

COLUMNS = ("Python object", "TensorImpl", "StorageImpl", "bytes")
_FILL = ("#dce9f5", "#fdf0d5", "#d9f0d3", "#eeeeee")
_WIDTH, _HEIGHT, _STEP = 2.3, 0.7, 3.2          # a box, and the distance between columns


def _storage_key(t):
    """One key per StorageImpl: torch hands out its address as ``_cdata``; internals' storage is
    the Python object itself."""
    s = t.untyped_storage()
    return getattr(s, "_cdata", None) or id(s)


def _is_tensor(obj):
    return hasattr(obj, "untyped_storage")


def _inside(address, t):
    """Does ``address`` fall in the bytes of ``t``'s storage?"""
    s = t.untyped_storage()
    return s.data_ptr() <= address < s.data_ptr() + max(s.nbytes(), 1)


def _tensor_base(array):
    """The tensor a NumPy array made by ``.numpy()`` keeps alive (torch: ``base``; internals: the
    base's ``tensor``), or None."""
    base = array.base
    return getattr(base, "tensor", base)


def ownership_layout(named):
    """``(nodes, edges)`` for ``named`` (``{"a": a, "n": n}``: tensors and NumPy arrays).

    ``nodes``: ``(column, row, label)``, column 0 to 3 as in ``COLUMNS``. ``edges``: ``(from, to,
    kind, label)`` node indices; kind ``"holds"`` (a reference that owns), ``"points"`` (an array's
    data pointer into bytes it does not own) or ``"keeps"`` (``_base`` / ``base``: keeps an object alive).
    """
    tensors = [(n, t) for n, t in named.items() if _is_tensor(t)]
    arrays = [(n, a) for n, a in named.items() if not _is_tensor(a)]
    drawn = {id(t) for _, t in tensors}
    for name, a in arrays:          # a tensor an array keeps alive is drawn too, named after the array
        base = _tensor_base(a)
        if _is_tensor(base) and id(base) not in drawn:
            tensors.append((f"{name}.base", base))
            drawn.add(id(base))
    groups = {}                     # tensors on one storage get neighbouring rows, the storage between them
    for name, t in tensors:
        groups.setdefault(_storage_key(t), []).append((name, t))
    starts = [a.__array_interface__["data"][0] for _, a in arrays]
    # the storages arrays point into go last, just above the arrays: their arrows then cross no box
    order = sorted(groups.values(), key=lambda group: any(_inside(start, group[0][1]) for start in starts))
    tensors = [pair for group in order for pair in group]
    nodes, edges, python, storages = [], [], {}, {}

    def add(column, row, label):
        nodes.append((column, row, label))
        return len(nodes) - 1

    for row, (name, t) in enumerate(tensors):
        python[id(t)] = add(0, row, f"{name}: Tensor")
        impl = add(1, row, f"sizes {list(t.shape)}\nstrides {tuple(t.stride())}\noffset {t.storage_offset()}")
        edges.append((python[id(t)], impl, "holds", ""))
        storages.setdefault(_storage_key(t), (t, []))[1].append(impl)
    blocks = []                                     # (first byte, a tensor on it, node of the block)
    for t, impls in storages.values():
        row = sum(nodes[i][1] for i in impls) / len(impls)
        s = t.untyped_storage()
        box = add(2, row, f"StorageImpl\n{s.nbytes()} bytes\n{len(impls)} TensorImpl{'s' * (len(impls) > 1)}")
        edges += [(i, box, "holds", "") for i in impls]
        blocks.append((s.data_ptr(), t, add(3, row, f"{s.nbytes()} bytes")))
        edges.append((box, blocks[-1][2], "holds", "data_ptr"))
    for row, (name, a) in enumerate(arrays, start=len(tensors)):
        node = add(0, row, f"{name}: ndarray")
        start = a.__array_interface__["data"][0]
        block = next(((first, b) for first, t, b in blocks if _inside(start, t)), None)
        if block is None:                           # memory of its own: a block it owns
            edges.append((node, add(3, row, f"{a.nbytes} bytes"), "holds", "data"))
        else:
            edges.append((node, block[1], "points", f"data, +{start - block[0]} B"))
        owner = python.get(id(_tensor_base(a)))
        if owner is not None:
            edges.append((node, owner, "keeps", "base"))
    for _, t in tensors:
        base = getattr(t, "_base", None)
        if base is not None and id(base) in python:
            edges.append((python[id(t)], python[id(base)], "keeps", "_base"))
    return nodes, edges


_STYLE = {"holds": dict(color="0.25", linestyle="-"), "points": dict(color="tab:red", linestyle="-"),
          "keeps": dict(color="0.45", linestyle="--")}


def ownership_map(named, ax=None, title=None):
    """Draw ``ownership_layout(named)``: one column per level, arrows from holder to held."""
    nodes, edges = ownership_layout(named)
    rows = max(r for _, r, _ in nodes) + 1
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.95 * rows + 1.1))
    where = [(_STEP * c, -r) for c, r, _ in nodes]
    for a, b, kind, label in edges:
        (x0, y0), (x1, y1) = where[a], where[b]
        if x0 == x1:                            # within a column (``_base``, ``base``): round the left side
            start, end, bend = (x0 - _WIDTH / 2, y0), (x1 - _WIDTH / 2, y1), -0.5 if y1 > y0 else 0.5
        elif kind == "points":                  # along the array's row, then up into the bytes
            start, end, bend = (x0 + _WIDTH / 2, y0), (x1, y1 - _HEIGHT / 2), None
        else:
            start, end, bend = (x0 + _WIDTH / 2, y0), (x1 - _WIDTH / 2, y1), 0.0
        path = "angle,angleA=0,angleB=90,rad=0" if bend is None else f"arc3,rad={bend}"
        ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", shrinkA=0, shrinkB=2, lw=1.2,
                                                              connectionstyle=path, **_STYLE[kind]))
        if label:
            inside = x0 == x1
            lx = start[0] - 0.45 if inside else (start[0] + end[0]) / 2
            ly = start[1] + 0.1 if kind == "points" else (start[1] + end[1]) / 2 + (0 if inside else 0.1)
            ax.text(lx, ly, label, fontsize=8.5, ha="right" if inside else "center",
                    va="center" if inside else "bottom", color=_STYLE[kind]["color"])
    for (column, _, label), (x, y) in zip(nodes, where):
        ax.add_patch(FancyBboxPatch((x - _WIDTH / 2, y - _HEIGHT / 2), _WIDTH, _HEIGHT, boxstyle="round,pad=0.03",
                                    facecolor=_FILL[column], edgecolor="0.3"))
        ax.text(x, y, label, ha="center", va="center", fontsize=9, family="monospace")
    for column, name in enumerate(COLUMNS):
        ax.text(_STEP * column, 0.75, name, ha="center", va="bottom", fontsize=10, weight="bold")
    ax.set_xlim(-_WIDTH / 2 - 1.4, _STEP * 3 + _WIDTH / 2 + 0.2)
    ax.set_ylim(-rows + 0.3, 1.2)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure
