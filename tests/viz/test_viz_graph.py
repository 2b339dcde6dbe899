"""The autograd graph picture (internals.viz.graph): the same program lays out the same in torch
and internals, every reachable node is placed once, and every arrow goes down at least one row."""
import pytest
import torch

import internals
from internals.viz.graph import graph_layout, graph_map

pytestmark = pytest.mark.usefixtures("close_figures")


def worked_example(lib):
    x = lib.tensor([2., 3.], requires_grad=True)
    return ((3 * x + 4) ** 2).mean()


def diamond(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    w = lib.tensor([0.5, -1.], requires_grad=True)
    a = x * w
    return (a.exp() + a * a).sum() + w.sum()


def two_outputs(lib):
    x = lib.arange(4.0).requires_grad_(True)
    first, second = x.split(2)
    return (first * second).sum()


PROGRAMS = [worked_example, diamond, two_outputs]


def reachable(root):
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return seen


@pytest.mark.parametrize("program", PROGRAMS)
def test_same_layout_as_torch(program):
    assert graph_layout(program(internals).grad_fn) == graph_layout(program(torch).grad_fn)


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_node_once_and_arrows_point_down(program):
    root = program(torch).grad_fn
    nodes, edges = graph_layout(root)
    assert len(nodes) == len(reachable(root))
    assert len({(r, c) for _, r, c in nodes}) == len(nodes)            # no two boxes in one place
    assert nodes[0][1:] == (0, 0) and nodes[0][0].startswith(root.name())
    expected = sum(1 for n in reachable(root) for m, _ in n.next_functions if m is not None)
    assert len(edges) == expected
    assert all(nodes[b][1] > nodes[a][1] for a, b, _ in edges)


def test_labels_name_the_saved_tensors_and_the_leaf():
    nodes, _ = graph_layout(worked_example(torch).grad_fn)
    labels = [label for label, _, _ in nodes]
    assert labels[1] == "PowBackward0\nsaved: exponent, self"
    assert labels[-1] == "AccumulateGrad\n[2]"
    assert graph_layout(worked_example(torch).grad_fn, saved=False)[0][1][0] == "PowBackward0"


@pytest.mark.parametrize("lib", [torch, internals])
def test_leaves_are_labelled_with_the_names_given(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    w = lib.tensor([0.5, -1.], requires_grad=True)
    nodes, _ = graph_layout((x * w).sum().grad_fn, names={"x": x, "w": w})
    leaves = [label for label, _, _ in nodes if label.startswith("AccumulateGrad")]
    assert leaves == ["AccumulateGrad\nx", "AccumulateGrad\nw"]
    unnamed, _ = graph_layout((x * w).sum().grad_fn, names={"x": x})
    assert [label for label, _, _ in unnamed if label.startswith("AccumulateGrad")] == ["AccumulateGrad\nx",
                                                                                        "AccumulateGrad\n[2]"]


def test_the_diamond_puts_the_shared_node_below_both_branches():
    nodes, edges = graph_layout(diamond(torch).grad_fn)
    names = [label.split("\n")[0] for label, _, _ in nodes]
    shared = names.index("MulBackward0")                # a = x * w, the first Mul the walk meets
    parents = sorted(names[a] for a, b, _ in edges if b == shared)
    assert parents == ["ExpBackward0", "MulBackward0", "MulBackward0"]     # exp(a), and a * a twice
    assert all(nodes[shared][1] > nodes[a][1] for a, b, _ in edges if b == shared)


def test_graph_map_draws_one_box_per_node_and_one_arrow_per_edge():
    root = diamond(internals).grad_fn
    nodes, edges = graph_layout(root)
    fig = graph_map(root, title="diamond")
    ax = fig.axes[0]
    assert len(ax.patches) == len(nodes)
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert len(arrows) == len(edges)
    fig.canvas.draw()
    paths = [a.arrow_patch.get_path().vertices.round(3).tolist() for a in arrows]
    assert len({str(p) for p in paths}) == len(paths)          # a repeated edge is drawn apart
    assert ax.get_title() == "diamond"
