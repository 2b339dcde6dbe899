"""The ownership picture (internals.viz.ownership): it finds the sharing in the objects it is
given, the same way for torch's tensors as for internals'."""
import pytest
import torch

import internals
from internals.viz.ownership import ownership_layout, ownership_map

pytestmark = pytest.mark.usefixtures("close_figures")


def views_and_a_copy(lib):
    a = lib.arange(8.)
    return {"a": a, "b": a[2:], "c": a.clone(), "d": a.view(2, 4).t(), "e": lib.zeros(3)}


def columns(layout, column):
    return [label for c, _, label in layout[0] if c == column]


def test_same_layout_as_torch():
    assert ownership_layout(views_and_a_copy(internals)) == ownership_layout(views_and_a_copy(torch))


def test_one_storage_box_per_storage_shared_by_the_views():
    nodes, edges = ownership_layout(views_and_a_copy(torch))
    assert columns((nodes, edges), 2) == ["StorageImpl\n32 bytes\n3 TensorImpls", "StorageImpl\n32 bytes\n1 TensorImpl",
                                          "StorageImpl\n12 bytes\n1 TensorImpl"]
    assert columns((nodes, edges), 1)[:3] == ["sizes [8]\nstrides (1,)\noffset 0", "sizes [6]\nstrides (1,)\noffset 2",
                                              "sizes [4, 2]\nstrides (1, 4)\noffset 0"]
    names = {label.split(":")[0]: i for i, (c, _, label) in enumerate(nodes) if c == 0}
    keeps = {(a, b, label) for a, b, kind, label in edges if kind == "keeps"}
    assert keeps == {(names["b"], names["a"], "_base"), (names["d"], names["a"], "_base")}
    assert sum(kind == "holds" and label == "data_ptr" for _, _, kind, label in edges) == 3


def test_a_numpy_array_points_into_the_bytes():
    for lib in (torch, internals):
        a = lib.arange(6.)
        nodes, edges = ownership_layout({"a": a, "n": a[2:].numpy()})
        n = next(i for i, (c, _, label) in enumerate(nodes) if label == "n: ndarray")
        bytes_node = next(i for i, (c, _, _) in enumerate(nodes) if c == 3)
        assert (n, bytes_node, "points", "data, +8 B") in edges
        kept = next(b for a_, b, kind, _ in edges if a_ == n and kind == "keeps")
        # torch's array keeps a tensor of its own on a's storage; internals' keeps the view it came from
        assert nodes[kept][2] == "n.base: Tensor"
        assert columns((nodes, edges), 2) == ["StorageImpl\n24 bytes\n2 TensorImpls"]


def test_an_array_with_its_own_memory_owns_its_bytes():
    import numpy as np
    nodes, edges = ownership_layout({"t": torch.zeros(2), "m": np.zeros(3)})
    assert columns((nodes, edges), 3) == ["8 bytes", "24 bytes"]
    assert not any(kind == "points" for _, _, kind, _ in edges)


def test_ownership_map_draws_every_box():
    named = views_and_a_copy(internals)
    fig = ownership_map(named, title="t")
    assert len(fig.axes[0].patches) == len(ownership_layout(named)[0])
