"""Chapter 4's exercises. The core one rebuilds TensorIterator's two geometry steps:
``reorder_dimensions`` (the loop order: which dim the innermost loop walks) and
``coalesce_dimensions`` (dims every operand walks as one merged into one). Plug them in with
``internals.exercises.use_mine("reorder_dimensions", fn)`` and ``use_mine("coalesce_dimensions", fn)``:
every elementwise operation then lays out its output and its loop with them.
``check_reduction_loop`` is the warm-up: a row sum written as a Numba loop."""
import numpy as np

from ..aten.tensor_iterator import _reorder, coalesce
from ..c10.tensor_impl import is_channels_last, is_contiguous, is_non_overlapping_and_dense
from ._runner import run_cases, run_generated, seeded

__all__ = ["check_coalesce_dimensions", "check_reduction_loop", "check_reorder_dimensions"]


def check_reduction_loop(fn, n=40, seed=0):
    """``fn(x) -> y``: ``x`` a 2-d float32 NumPy array (any strides), ``y`` its sums over dim 1,
    matching ``torch.sum(x, dim=1)`` to float32 accuracy."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    np_rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        rows, cols = rng.randint(0, 9), rng.randint(0, 300)
        x = np_rng.standard_normal((rows, cols), dtype=np.float32)
        cases.append((x.T.copy().T if rng.random() < 0.3 else x,))

    def same(got, want):
        return got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-3)

    return run_cases("check_reduction_loop", lambda x: np.asarray(fn(x)), cases,
                     lambda x: torch.sum(torch.from_numpy(x), dim=1).numpy(), same)


def _operands():
    """A broadcast shape (no size-0 dims: those never reach a loop) and 1 to 3 operands' strides
    over it: permuted contiguous layouts, broadcast (stride 0) dims, sliced dims, equal strides."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    @st.composite
    def build(draw):
        shape = tuple(draw(st.lists(st.sampled_from([1, 2, 2, 3, 4]), min_size=1, max_size=4)))
        operands = []
        for _ in range(draw(st.integers(1, 3))):
            order = draw(st.permutations(range(len(shape))))       # slowest dim first
            strides, step = [0] * len(shape), draw(st.sampled_from([1, 1, 2]))
            for d in reversed(order):
                strides[d] = step
                step *= shape[d]
            for d in range(len(shape)):
                if draw(st.integers(0, 4)) == 0:
                    strides[d] = 0                                   # broadcast along d
            operands.append(tuple(strides))
        return shape, operands
    return build()


def _torch_output_strides(torch, shape, operands):
    """The strides torch gives the output of an elementwise op over these operands (``neg``,
    ``add`` or ``addcmul`` for 1, 2 or 3 of them): TensorIterator's reorder_dimensions decides them."""
    tensors = []
    for strides in operands:
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        tensors.append(torch.zeros(span).as_strided(shape, strides))
    op = {1: torch.neg, 2: torch.add, 3: torch.addcmul}[len(tensors)]
    return tuple(op(*tensors).stride())


def _takes_fast_path(shape, operands):
    """TensorIterator's ``fast_set_up`` applies: all contiguous, all channels-last, or all dense
    with the same strides."""
    if all(is_contiguous(shape, s) for s in operands):
        return True
    if len(shape) == 4 and all(is_channels_last(shape, s) for s in operands):
        return True
    return all(s == operands[0] for s in operands) and is_non_overlapping_and_dense(shape, operands[0])


def _output_strides(shape, perm):
    strides, step = [0] * len(shape), 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def check_reorder_dimensions(fn):
    """``fn(shape, operand_strides) -> perm``: the dims in the order the loop walks them, fastest
    first (``perm[0]`` is the innermost loop's dim), as ``reorder_dimensions`` orders them. The
    output's strides follow from it (contiguous in that order), and must be torch's."""
    import torch  # torch is heavy: only a check needs it


    def check_one(case):
        shape, operands = case
        perm, want = fn(shape, [list(s) for s in operands]), _reorder(shape, operands)
        assert perm is not None and sorted(perm) == list(range(len(shape))), \
            f"shape {shape}, operand strides {operands}: {perm} is not a permutation of the dims"
        yours, torchs = _output_strides(shape, list(perm)), _torch_output_strides(torch, shape, operands)
        # Where every operand is laid out alike (``fast_set_up``), torch copies that layout and never
        # reorders: only the order itself can be compared there.
        assert _takes_fast_path(shape, operands) or yours == torchs, (
            f"shape {shape}, operand strides {operands}: your order {list(perm)} gives the output strides {yours}, "
            f"torch's output has {torchs} (torch's order: {want})")
        assert list(perm) == list(want), \
            f"shape {shape}, operand strides {operands}: yours {list(perm)}, torch's order {want} (same strides)"
    return run_generated("check_reorder_dimensions", _operands(), check_one, max_examples=200)


def _walk(shape, strides):
    """The offsets one operand visits, fastest dim first, in loop order."""
    offsets = [0]
    for n, s in zip(shape, strides):
        offsets = [o + i * s for i in range(n) for o in offsets]
    return offsets


def check_coalesce_dimensions(fn):
    """``fn(shape, operand_strides) -> (shape, operand_strides)``, both fastest first: adjacent
    dims merged wherever every operand steps through them as through one dim (and size-1 dims
    folded away), as ``coalesce_dimensions`` does. The merged loop must visit every operand's
    elements in the same order as the original one."""

    def check_one(case):
        shape, operands = case
        fastest_first = list(reversed(shape))
        strides = [list(reversed(s)) for s in operands]
        yours = fn(list(fastest_first), [list(s) for s in strides])
        want_shape, want_strides = coalesce(fastest_first, strides)
        assert yours is not None and len(yours) == 2, f"return (shape, operand_strides), got {yours!r}"
        got_shape, got_strides = list(yours[0]), [list(s) for s in yours[1]]
        for k, s in enumerate(strides):
            same_walk = len(got_strides) == len(strides) and _walk(got_shape, got_strides[k]) == _walk(fastest_first, s)
            assert same_walk, (
                f"shape {fastest_first}, strides {strides}: your {got_shape}, {got_strides} visits operand {k}'s "
                "elements in another order")
        assert (got_shape, got_strides) == (want_shape, want_strides), (
            f"shape {fastest_first}, strides {strides}: yours {got_shape}, {got_strides}; "
            f"coalesce_dimensions gives {want_shape}, {want_strides}")
    return run_generated("check_coalesce_dimensions", _operands(), check_one, max_examples=200)
