"""internals.exercises: each checker passes a correct solution and reports a wrong one."""
import math

import numpy as np
import pytest

from internals import exercises as ex


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def view_strides(shape, strides, new_shape):
    # torch's computeStride: match chunks of old dims that are contiguous among themselves.
    if math.prod(shape) == 0:     # torch keeps the old strides for the same shape
        return tuple(strides) if tuple(shape) == tuple(new_shape) else contiguous_strides(new_shape)
    if not shape:  # a 0-dim tensor: every new dim has size 1
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1] if strides else 1
    tensor_numel, view_numel = 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


def broadcast_shapes(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"{x} vs {y}")
        out.append(y if x == 1 else x)
    return tuple(out)


def storage_size(shape, strides, offset):
    if 0 in shape:
        return 0
    return offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides))


def test_correct_solutions_pass(capsys):
    assert ex.check_contiguous_strides(contiguous_strides) is True
    assert ex.check_view_strides(view_strides) is True
    ex.check_broadcast_shapes(broadcast_shapes)
    assert ex.check_storage_size(storage_size) is True
    ex.check_reduction_loop(lambda x: x.sum(axis=1))
    out = capsys.readouterr().out
    assert out.count("cases match torch") == 2 and out.count("right on all") == 3


def test_wrong_solutions_fail_and_say_where(capsys):
    # The core exercises' checkers return False and print the smallest failing input.
    core = [(ex.check_contiguous_strides, lambda s: contiguous_strides(s)[::-1]),
            (ex.check_view_strides, lambda *a: contiguous_strides(a[2])),  # never refuses
            (ex.check_storage_size, lambda sh, st, off: math.prod(sh))]
    for check, fn in core:
        assert check(fn) is False
    out = capsys.readouterr().out
    assert out.count("smallest failing input") == 3 and "yours" in out and "torch" in out
    # The warm-up exercises' checkers raise, listing inputs, expected and got.
    warm_up = [(ex.check_broadcast_shapes, lambda a, b: a if len(a) >= len(b) else b),
               (ex.check_reduction_loop, lambda x: np.zeros(x.shape[0], np.float32) + 1)]
    for check, fn in warm_up:
        with pytest.raises(AssertionError, match="cases differ from torch"):
            check(fn)
    out = capsys.readouterr().out
    assert out.count("differ from torch") == 2
    assert "input" in out and "expected" in out and "got" in out


def test_view_cases_include_refusals(capsys):
    """The view checker's cases mix views torch makes with views it refuses."""
    from internals.aten.native.tensor_shape import compute_stride
    answers = []

    def counting(shape, strides, new_shape):
        answers.append(compute_stride(shape, strides, new_shape))
        return answers[-1]
    assert ex.check_view_strides(counting) is True
    refused = sum(a is None for a in answers)
    assert 10 < refused < len(answers) - 10
