"""Chapter 3's core exercise: how many elements of storage a view reaches into
(``at::detail::computeStorageNbytes`` divided by the element size). The package asks it whenever a
tensor is made over a storage (``set_``, ``as_strided``, ``resize_``'s growth, ``empty_strided``):
plug a right answer in with ``internals.exercises.use_mine("storage_size", fn)``."""
from ._runner import run_generated

__all__ = ["check_storage_size"]


def _cases():
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    dims = st.lists(st.tuples(st.sampled_from([0, 1, 1, 2, 3, 5]), st.sampled_from([0, 1, 2, 3, 7, 12])),
                    min_size=0, max_size=4)
    return st.tuples(dims, st.sampled_from([0, 0, 1, 5]))


def check_storage_size(fn):
    """``fn(shape, strides, offset) -> int``: the fewest storage elements a tensor with this
    geometry reaches into, its offset included; 0 for a tensor with no elements."""
    import torch  # torch is heavy: only a check needs it

    def check_one(case):
        dims, offset = case
        shape, strides = tuple(d for d, _ in dims), tuple(s for _, s in dims)
        # torch's answer: the bytes empty_strided allocates for one-byte elements, plus the offset
        # (a view at that offset reaches that much further); nothing at all for no elements.
        t = torch.empty_strided(shape, strides, dtype=torch.uint8)
        torchs = 0 if t.numel() == 0 else t.untyped_storage().nbytes() + offset
        yours = fn(shape, strides, offset)
        assert yours == torchs, f"shape {shape}, strides {strides}, offset {offset}: yours {yours}, torch's {torchs}"
    return run_generated("check_storage_size", _cases(), check_one, max_examples=150)
