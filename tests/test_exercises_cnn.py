"""Chapter 10's build-it checkers: each accepts a right answer and rejects a wrong one."""
import pytest

import internals
from internals.exercises.cnn import check_conv2d, check_im2col


def im2col(x, kernel_size, stride, padding):
    c, h, w = x.shape
    kh, kw = kernel_size
    padded = internals.zeros(c, h + 2 * padding, w + 2 * padding)
    padded[:, padding:padding + h, padding:padding + w] = x
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    rows = [padded[ci, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride].reshape(oh * ow)
            for ci in range(c) for i in range(kh) for j in range(kw)]
    return internals.stack(rows)


def conv2d(x, weight, stride, padding, cols=im2col):
    o, _, kh, kw = weight.shape
    oh = (x.shape[2] + 2 * padding - kh) // stride + 1
    ow = (x.shape[3] + 2 * padding - kw) // stride + 1
    return internals.stack([(weight.reshape(o, -1) @ cols(x[b], (kh, kw), stride, padding)).reshape(o, oh, ow)
                            for b in range(x.shape[0])])


def im2col_ignoring_padding(x, kernel_size, stride, padding):
    return im2col(x, kernel_size, stride, 0)


CASES = [
    (check_im2col, im2col, im2col_ignoring_padding),
    (check_conv2d, conv2d, lambda x, w, s, p: conv2d(x, w.flip(2), s, p)),     # a correlation flipped
]


@pytest.mark.parametrize("checker, right, wrong", CASES, ids=[c[0].__name__ for c in CASES])
def test_checker_accepts_the_right_answer_and_rejects_a_wrong_one(checker, right, wrong, capsys):
    assert checker(right) is True
    assert "right on all" in capsys.readouterr().out
    assert checker(wrong) is False
    assert "wrong on" in capsys.readouterr().out
