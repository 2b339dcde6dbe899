"""The pictures of TensorIterator.build() (internals.viz.kernels): their numbers are a real build's,
and the loop they describe walks the operands as torch's output strides and broadcasting say."""
import itertools

import pytest
import torch

import internals
from internals.aten.tensor_iterator import TensorIterator
from internals.viz.kernels import build_map, build_steps, layout_map, layout_steps, trace_build

pytestmark = pytest.mark.usefixtures("close_figures")


def _pairs(lib):
    z = lib.arange(24.).reshape(2, 3, 4)
    x = lib.arange(24.).reshape(4, 6)
    nhwc = lib.arange(120.).reshape(2, 3, 4, 5)
    return {
        "permuted + contiguous": (z.permute(2, 0, 1), lib.ones(4, 2, 3)),
        "contiguous + permuted": (lib.ones(4, 2, 3), z.permute(2, 0, 1)),
        "permuted + broadcast": (z.permute(2, 0, 1), lib.ones(4, 1, 3)),
        "transposed + contiguous": (x.t(), lib.ones(6, 4)),
        "matrix + row": (x, lib.arange(6.)),
        "column + row": (lib.arange(4.).reshape(4, 1), lib.arange(6.)),
        "strided + contiguous": (x[:, ::2], lib.ones(4, 3)),
        "sliced + contiguous": (x[:, :3], lib.ones(4, 3)),
        "channels-last + contiguous": (nhwc.permute(0, 3, 1, 2), lib.ones(2, 5, 3, 4)),
    }


NAMES = list(_pairs(torch))


def _walk(sizes, strides):
    """Every loop position's offsets, one tuple per position (dimension 0 fastest)."""
    ranges = [range(n) for n in reversed(sizes)]
    return {tuple(sum(i * s for i, s in zip(reversed(index), op)) for op in strides)
            for index in itertools.product(*ranges)}


def _torch_offsets(out, a, b):
    """The same triples from torch: for every index, the offset of that element in out, a, b."""
    shape = out.shape
    ops = [out, a.expand(shape), b.expand(shape)]
    return {tuple(sum(i * s for i, s in zip(index, t.stride())) for t in ops)
            for index in itertools.product(*[range(n) for n in shape])}


@pytest.mark.parametrize("name", NAMES)
def test_the_stages_are_torchs_layout(name):
    a, b = _pairs(internals)[name]
    ta, tb = _pairs(torch)[name]
    expected = ta + tb
    stages = layout_steps(TensorIterator.binary_config(None, a, b))
    first = stages["compute_strides"]
    assert first["sizes"] == list(expected.shape)
    assert first["strides"][0] is None          # no output yet
    assert first["strides"][1:] == [list(ta.expand(expected.shape).stride()),
                                    list(tb.expand(expected.shape).stride())]
    if "reorder_dimensions" in stages:
        reorder = stages["reorder_dimensions"]
        perm = reorder["perm"]
        assert sorted(perm) == list(range(expected.dim()))
        assert reorder["sizes"] == [expected.shape[d] for d in perm]
        assert reorder["strides"][0] == [expected.stride(d) for d in perm]    # torch's output
        assert reorder["strides"][0] == sorted(reorder["strides"][0])        # dense in loop order
    loop = stages["coalesce_dimensions"]
    # the loop visits exactly the (out, a, b) offset triples torch's a + b pairs up (offsets
    # counted from each operand's first element)
    walked = _walk(loop["sizes"], loop["strides"])
    assert walked == _torch_offsets(expected, ta, tb)
    assert len(walked) == expected.numel()


def test_a_shared_dense_layout_takes_the_fast_path_one_flat_loop():
    x = internals.arange(24.).reshape(4, 6)
    stages = layout_steps(TensorIterator.binary_config(None, x.t(), x.t()))
    assert list(stages) == ["compute_strides", "coalesce_dimensions"]
    assert stages["coalesce_dimensions"] == {"sizes": [24], "strides": [[1], [1], [1]]}


def test_build_steps_are_torchs_in_torchs_order():
    steps = build_steps()
    torch_order = ["compute_shape", "compute_types", "fast_set_up", "compute_strides", "reorder_dimensions",
                   "allocate_or_resize_outputs", "coalesce_dimensions"]
    assert [s for s in steps if s in torch_order] == torch_order


@pytest.mark.parametrize("name", NAMES)
def test_a_traced_build_is_the_build(name):
    a, b = _pairs(internals)[name]
    it, trace = trace_build(TensorIterator.binary_config(None, a, b))
    plain = TensorIterator.binary_config(None, a, b).build()
    assert it.result.stride() == plain.result.stride() and it.shape == plain.shape
    assert it.geometry.shape.tolist() == plain.geometry.shape.tolist()
    ran = {step for step, _ in trace}
    assert ran <= set(build_steps())
    assert ("reorder_dimensions" in ran) == (not it.fast)


def test_layout_map_draws_the_numbers_of_each_stage():
    a, b = _pairs(internals)["permuted + contiguous"]
    config = TensorIterator.binary_config(None, a, b)
    stages = layout_steps(config)
    fig = layout_map(TensorIterator.binary_config(None, a, b), ["out", "a", "b"])
    assert len(fig.axes) == 3
    for ax, stage in zip(fig.axes, stages.values()):
        cells = [t.get_text() for t in ax.texts if t.get_text().lstrip("-").isdigit() or t.get_text() == "?"]
        sizes = [str(n) for n in stage["sizes"]]
        strides = ["?" if s is None else str(s[d]) for d in range(len(sizes)) for s in stage["strides"]]
        assert sorted(cells) == sorted(sizes + strides)


def test_build_map_greys_the_steps_that_did_not_run():
    x = internals.ones(2, 3)
    _, trace = trace_build(TensorIterator.binary_config(None, x, x))
    fig = build_map([step for step, _ in trace])
    labels = {t.get_text().split(". ", 1)[1]: t.get_color() for t in fig.axes[0].texts if ". " in t.get_text()}
    assert set(labels) == set(build_steps())
    grey = {step for step, color in labels.items() if color != "black"}
    assert grey == {"compute_strides", "reorder_dimensions"}
