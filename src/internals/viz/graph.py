"""The autograd graph, drawn: backward nodes as boxes, ``next_functions`` edges as arrows.

``graph_layout`` walks a graph from its root ``grad_fn`` through ``next_functions`` and places
every node: its row is its longest distance from the root, so a node is drawn below every node
that sends it a gradient; within a row, nodes keep the order in which the walk first met them.
It reads only ``name()``, ``next_functions`` and ``_saved_*`` attribute names, so it works on
torch's nodes and on internals' alike: the same program gives the same layout in both.
``graph_map`` draws it; edges ``(None, 0)`` (an input that needs no gradient) are left out.
A leaf's ``AccumulateGrad`` box shows the leaf's name when ``names`` maps names to the leaves
(``names={"x": x}``), else its shape.
"""
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

__all__ = ["graph_layout", "graph_map"]

_ACCUMULATE = "torch::autograd::AccumulateGrad"
_FILL = {"node": "#dce9f5", "leaf": "#d9f0d3"}


def _label(node, saved, names):
    if node.name() == _ACCUMULATE:
        name = next((n for n, t in names.items() if t is node.variable), None)
        return f"AccumulateGrad\n{name if name is not None else list(node.variable.shape)}"
    names = [a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_")] if saved else []
    return node.name() + ("\nsaved: " + ", ".join(names) if names else "")


def graph_layout(root, saved=True, names=None):
    """``(nodes, edges)`` of the graph behind ``root`` (a ``grad_fn``).

    ``nodes``: one ``(label, row, column)`` per node, in the order the walk met them; ``edges``:
    ``(from, to, input_nr)`` index pairs with the edge's ``input_nr``. ``saved`` adds the names of
    the node's ``_saved_*`` attributes to its label; ``names`` (``{"x": x}``) names the leaves.
    """
    order, index, edges = [], {}, []
    stack = [root]
    while stack:                        # depth first, next_functions in order
        node = stack.pop()
        if node in index:
            continue
        index[node] = len(order)
        order.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None and n not in index)
    for node in order:
        edges += [(index[node], index[n], nr) for n, nr in node.next_functions if n is not None]
    row = [0] * len(order)
    for _ in order:                     # longest path from the root: relax until stable (a DAG)
        changed = False
        for a, b, _ in edges:
            if row[b] < row[a] + 1:
                row[b], changed = row[a] + 1, True
        if not changed:
            break
    columns, nodes = {}, []
    for i, node in enumerate(order):
        col = columns.get(row[i], 0)
        columns[row[i]] = col + 1
        nodes.append((_label(node, saved, names or {}), row[i], col))
    return nodes, edges


def graph_map(root, ax=None, title=None, saved=True, names=None):
    """Draw the graph behind ``root`` (leaves named by ``names``, ``{"x": x}``); returns the figure."""
    nodes, edges = graph_layout(root, saved, names)
    rows = max(r for _, r, _ in nodes) + 1
    width = {r: sum(1 for _, rr, _ in nodes if rr == r) for r in range(rows)}
    span = max(width.values())
    chars = max(len(line) for label, _, _ in nodes for line in label.split("\n"))
    box = max(2.1, 0.1 * chars)
    step = box + 0.3                    # between box centres
    if ax is None:
        _, ax = plt.subplots(figsize=(step * span + 0.4, 1.1 * rows + 0.4))
    where = [(step * (c + 0.5) * span / width[r], -r) for _, r, c in nodes]    # each row centred
    middle = step * span / 2
    drawn = {}
    for (a, b, nr) in edges:
        (x0, y0), (x1, y1) = where[a], where[b]
        repeat = drawn[a, b] = drawn.get((a, b), -1) + 1      # a node may feed one input twice (a * a)
        bend = 0.35 * repeat
        if y0 - y1 > 1:                 # a long edge bulges outwards, round the boxes between
            bend = -0.3 if x0 > middle else 0.3
        ax.annotate("", xy=(x1, y1 + 0.28), xytext=(x0, y0 - 0.28),
                    arrowprops=dict(arrowstyle="-|>", color="0.35", shrinkA=0, shrinkB=0,
                                    connectionstyle=f"arc3,rad={bend}"))
        if nr:
            ax.text((x0 + x1) / 2 + 0.1 + 0.2 * repeat, (y0 + y1) / 2, f"input_nr {nr}", fontsize=7,
                    color="0.35", ha="left", va="center")
    ax.set_xlim(min(x for x, _ in where) - box / 2 - 0.4, max(x for x, _ in where) + box / 2 + 0.4)
    ax.set_ylim(-rows + 0.4, 0.5)
    # Text is sized in points, boxes in data units: fit the longest line into a box at this scale
    # (a monospace character is about 0.6 em wide).
    left, right = ax.get_xlim()
    points_per_unit = ax.get_position().width * ax.figure.get_figwidth() * 72 / (right - left)
    fontsize = min(8, 0.92 * box * points_per_unit / (0.6 * chars))
    for (label, _, _), (x, y) in zip(nodes, where):
        kind = "leaf" if label.startswith("AccumulateGrad") else "node"
        ax.add_patch(FancyBboxPatch((x - box / 2, y - 0.28), box, 0.56, boxstyle="round,pad=0.02",
                                    facecolor=_FILL[kind], edgecolor="0.3"))
        ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, family="monospace")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure
