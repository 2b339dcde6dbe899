"""The stride map (internals.viz.strides): the indices it draws are the ones torch reads."""
import matplotlib.pyplot as plt
import pytest
import torch

from internals.viz.strides import memory_order_map, storage_indices, stride_map

VIEWS = [  # (sizes, strides, offset) over a 12-element storage
    ((3, 4), (4, 1), 0),
    ((4, 3), (1, 4), 0),
    ((2, 2), (4, 2), 5),
    ((3, 4), (0, 1), 0),
    ((3,), (5,), 1),
    ((5, 4), (2, 1), 0),
]


pytestmark = pytest.mark.usefixtures("close_figures")


@pytest.mark.parametrize("sizes,strides,offset", VIEWS)
def test_storage_indices_are_what_torch_reads(sizes, strides, offset):
    # Over a storage holding arange, each element's value is its storage index.
    view = torch.arange(12).as_strided(sizes, strides, offset)
    indices = storage_indices(sizes, strides, offset)
    assert [indices[i] for i in sorted(indices)] == view.flatten().tolist()


@pytest.mark.parametrize("sizes,strides,offset", VIEWS)
def test_every_element_is_labelled_with_its_storage_index(sizes, strides, offset):
    ax = stride_map(sizes, strides, offset, 12)
    labels = [t.get_text() for t in ax.texts]
    for index in storage_indices(sizes, strides, offset).values():
        assert str(index) in labels
    n_elements = 1
    for n in sizes:
        n_elements *= n
    assert len(ax.patches) == 12 + n_elements   # storage cells + view cells


def test_repeated_cells_are_counted():
    ax = stride_map((3, 4), (0, 1), 0, 4)
    assert [t.get_text() for t in ax.texts].count("×3") == 4


def test_out_of_bounds_elements_are_drawn_dashed():
    ax = stride_map((3, 4), (5, 2), 3, 12)   # reaches index 19 of 12
    dashed = [p for p in ax.patches if p.get_linestyle() == "dashed"]
    beyond = [k for k in storage_indices((3, 4), (5, 2), 3).values() if k >= 12]
    assert len(dashed) == len(beyond) + 1    # + the "past the end" storage cell


def test_draws_into_a_given_axes():
    _, ax = plt.subplots()
    assert stride_map((2, 2), (2, 1), 0, 4, ax=ax) is ax


@pytest.mark.parametrize("sizes,strides", [((2, 2, 2), (4, 2, 1)), ((2, 2), (1,))])
def test_rejects_what_it_cannot_draw(sizes, strides):
    with pytest.raises(ValueError):
        stride_map(sizes, strides, 0, 8)


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_memory_order_map_colours_storage_by_torchs_channels(fmt):
    """The storage row's colours are the channels torch stores at each position, in order."""
    t = torch.arange(3.).view(1, 3, 1, 1).expand(2, 3, 2, 2).contiguous(memory_format=fmt)
    ax = memory_order_map(t.shape, t.stride())
    cmap = plt.get_cmap("tab10")
    storage_row = [p for p in ax.patches if p.get_y() == 0]
    held = t.as_strided((t.numel(),), (1,)).tolist()        # the channel stored at each position
    assert [p.get_facecolor() for p in storage_row] == [cmap(int(c)) for c in held]
    labels = [x.get_text() for x in ax.texts]
    assert sorted(int(s) for s in labels if s.isdigit()) == sorted(list(range(24)) * 2)


def test_memory_order_map_rejects_other_ranks():
    with pytest.raises(ValueError):
        memory_order_map((2, 3), (3, 1))
