"""The tiling picture (internals.viz.kernels): its tiles are the ones a block needs, by torch's matmul."""
import pytest
import torch

from internals.viz.kernels import tile_map, tile_steps

SHAPES = [  # (M, N, K, tile): exact multiples, ragged edges, K shorter than a tile
    (8, 8, 8, 4),
    (10, 7, 9, 4),
    (5, 6, 3, 4),
    (16, 16, 40, 16),
]


pytestmark = pytest.mark.usefixtures("close_figures")


def _blocks(M, N, tile):
    return [(bi, bj) for bi in range(-(-M // tile)) for bj in range(-(-N // tile))]


@pytest.mark.parametrize("M,N,K,tile", SHAPES)
def test_the_steps_of_every_block_sum_to_its_tile_of_the_product(M, N, K, tile):
    torch.manual_seed(0)
    a, w = torch.randn(M, K, dtype=torch.float64), torch.randn(K, N, dtype=torch.float64)
    expected = a @ w
    covered = torch.zeros(M, N, dtype=torch.int64)
    for block in _blocks(M, N, tile):
        steps = tile_steps(M, N, K, tile, block)
        assert len(steps) == -(-K // tile)
        rows, _, cols = steps[0]
        acc = sum(a[list(r)][:, list(k)] @ w[list(k)][:, list(c)] for r, k, c in steps)
        torch.testing.assert_close(acc, expected[rows.start:rows.stop, cols.start:cols.stop])
        covered[rows.start:rows.stop, cols.start:cols.stop] += 1
    assert covered.eq(1).all()      # the blocks tile the output exactly once


def test_a_block_outside_the_grid_is_refused():
    with pytest.raises(ValueError, match="outside the grid"):
        tile_steps(8, 8, 8, 4, (2, 0))


@pytest.mark.parametrize("M,N,K,tile", SHAPES)
def test_the_picture_labels_each_step_once_in_a_and_once_in_w(M, N, K, tile):
    block = (M - 1) // tile, 0
    fig = tile_map(M, N, K, tile, block)
    a_ax, w_ax, out_ax = fig.axes
    steps = [str(s) for s in range(-(-K // tile))]
    assert [t.get_text() for t in a_ax.texts] == steps
    assert [t.get_text() for t in w_ax.texts] == steps
    assert [t.get_text() for t in out_ax.texts] == [f"sum of\n{len(steps)} steps"]
    # the coloured rectangles in a cover exactly the block's band of rows, all of K
    band = [p for p in a_ax.patches if p.get_alpha() == 0.85]
    assert sum(p.get_width() * p.get_height() for p in band) == len(tile_steps(M, N, K, tile, block)[0][0]) * K
