"""Build-it exercises for chapter 10 (a CNN that trains like torch): the convolution as im2col
and one matrix product, written by hand.

``check_im2col(fn)`` (the chapter's core exercise): ``fn(x, kernel_size, stride, padding,
dilation)`` takes an ``(N, C, H, W)`` internals tensor and pairs (height, width), and returns the
``(N, C·kh·kw, OH·OW)`` column matrix: one column per output position (row-major), one row per
(channel, kernel row, kernel column), zeros where the window reaches into the padding. Compared
with ``torch.nn.functional.unfold`` on generated shapes, with non-square kernels, strides,
paddings and dilations, and inputs that are not contiguous (channels-last, transposed, expanded).
``use_mine("im2col", fn)`` makes every convolution of the package, forward and backward, take
its columns from ``fn``.

``check_conv2d(fn)``: ``fn(x, weight, stride, padding)`` takes ``(N, C, H, W)`` and
``(O, C, kh, kw)`` internals tensors and returns the ``(N, O, OH, OW)`` convolution, built from
columns and a matrix product. Compared with ``torch.nn.functional.conv2d``.
"""
import internals

from ._runner import readers_answer, run_generated

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


def _unfold_cases():
    """(N, C, H, W), kernel, stride, padding, dilation, layout, seed: each a pair (height, width),
    drawn apart so that an answer that mixes up height and width shows; always one output."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    def pair(lo, hi):
        return st.tuples(st.integers(lo, hi), st.integers(lo, hi))

    @st.composite
    def draw(draw):
        kernel, stride, padding, dilation = draw(pair(1, 3)), draw(pair(1, 2)), draw(pair(0, 2)), draw(pair(1, 2))
        extent = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
        hw = [draw(st.integers(max(e - 2 * p, 1), 6)) for e, p in zip(extent, padding)]
        shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *hw)
        layout = draw(st.sampled_from(["contiguous", "contiguous", "channels_last", "transposed", "expanded"]))
        return shape, kernel, stride, padding, dilation, layout, draw(st.integers(0, 99))
    return draw()


def _image(shape, layout, seed):
    import torch  # torch is heavy: only a check needs it
    g = torch.Generator().manual_seed(seed)
    n, c, h, w = shape
    if layout == "channels_last":
        return torch.randn(shape, generator=g).contiguous(memory_format=torch.channels_last)
    if layout == "transposed":
        return torch.randn(n, c, w, h, generator=g).transpose(2, 3)
    if layout == "expanded":
        return torch.randn(1, c, h, w, generator=g).expand(shape)
    return torch.randn(shape, generator=g)


def check_im2col(fn):
    """Check ``im2col(x, kernel_size, stride, padding, dilation)`` of a batch against torch's unfold."""
    import torch  # torch is heavy: only a check needs it

    def check_one(case):
        shape, kernel, stride, padding, dilation, layout, seed = case
        x = _image(shape, layout, seed)
        want = torch.nn.functional.unfold(x, kernel, dilation=dilation, padding=padding, stride=stride)
        got = readers_answer(fn, internals.from_torch(x), kernel, stride, padding, dilation,
                             want=f"torch's unfold: shape {tuple(want.shape)}")
        assert got is not None, "your im2col returned None"
        assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)}, torch's {tuple(want.shape)}"
        ours = got.to_torch()
        wrong = (ours != want).nonzero()
        assert not len(wrong), (f"{len(wrong)} of {want.numel()} values differ from torch's unfold; the first at "
                                f"(image, row, column) {tuple(wrong[0].tolist())}: yours {ours[tuple(wrong[0])]}, "
                                f"torch's {want[tuple(wrong[0])]}")
    return run_generated("check_im2col", _unfold_cases(), check_one, max_examples=60)


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
