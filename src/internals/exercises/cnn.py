"""Build-it exercises for chapter 10 (a CNN that trains like torch): the convolution as im2col
and one matrix product, written by hand.

``check_im2col(fn)``: ``fn(x, kernel_size, stride, padding)`` takes a ``(C, H, W)`` internals
tensor and returns the ``(C * kh * kw, OH * OW)`` column matrix: one column per output position
(row-major), one row per (channel, kernel row, kernel column), zeros where the window reaches
into the padding. Compared with ``torch.nn.functional.unfold`` on generated shapes.

``check_conv2d(fn)``: ``fn(x, weight, stride, padding)`` takes ``(N, C, H, W)`` and
``(O, C, kh, kw)`` internals tensors and returns the ``(N, O, OH, OW)`` convolution, built from
columns and a matrix product. Compared with ``torch.nn.functional.conv2d``.
"""
import internals

from ._runner import run_generated

__all__ = ["check_im2col", "check_conv2d"]


def _geometry():
    """Shapes that always leave at least one output position."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    @st.composite
    def draw(draw):
        kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        stride, padding = draw(st.integers(1, 2)), draw(st.integers(0, 1))
        h = draw(st.integers(max(kh - 2 * padding, 1), 6))
        w = draw(st.integers(max(kw - 2 * padding, 1), 6))
        return draw(st.integers(1, 3)), h, w, (kh, kw), stride, padding, draw(st.integers(0, 99))
    return draw()


def check_im2col(fn):
    """Check a hand-written ``im2col(x, kernel_size, stride, padding)`` against torch's unfold."""
    import torch  # torch is heavy: only a check needs it


    def check_one(case):
        c, h, w, kernel, stride, padding, seed = case
        x = torch.randn(c, h, w, generator=torch.Generator().manual_seed(seed))
        want = torch.nn.functional.unfold(x[None], kernel, stride=stride, padding=padding)[0]
        got = fn(internals.from_torch(x), kernel, stride, padding)
        assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)}, torch's {tuple(want.shape)}"
        assert torch.equal(got.to_torch(), want), "values differ from torch's unfold"
    return run_generated("check_im2col", _geometry(), check_one, max_examples=30)


def check_conv2d(fn):
    """Check a hand-written ``conv2d(x, weight, stride, padding)`` against torch's conv2d."""
    import torch  # torch is heavy: only a check needs it


    def check_one(case):
        c, h, w, kernel, stride, padding, seed = case
        g = torch.Generator().manual_seed(seed)
        x, weight = torch.randn(2, c, h, w, generator=g), torch.randn(3, c, *kernel, generator=g)
        want = torch.nn.functional.conv2d(x, weight, stride=stride, padding=padding)
        got = fn(internals.from_torch(x), internals.from_torch(weight), stride, padding)
        assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)}, torch's {tuple(want.shape)}"
        assert torch.allclose(got.to_torch(), want, atol=1e-5), "values differ from torch's conv2d"
    return run_generated("check_conv2d", _geometry(), check_one, max_examples=30)
