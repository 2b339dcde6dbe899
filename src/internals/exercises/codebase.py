"""Build-it exercise for chapter 8 (the codebase tour): an operator added through a library.

``check_axpy_operator(register)``: ``register(library_module)`` must define, in a fresh
namespace it is given, ``axpy(Tensor x, Tensor y, Scalar alpha) -> Tensor`` computing
``alpha * x + y``, with a kernel for the ``CPU`` key, and return the ``Library`` object. The
checker registers it with ``torch.library`` and with ``internals.library``, calls both
operators on generated broadcastable shapes and values of ``alpha``, compares the results, and
destroys both libraries again.
"""
import internals

from ._runner import run_generated

__all__ = ["check_axpy_operator"]


def check_axpy_operator(register):
    """Check ``register(library_module) -> Library`` (``axpy`` in namespace ``exercise_axpy``)."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    from hypothesis.extra.numpy import mutually_broadcastable_shapes  # hypothesis is heavy: only a checker needs it


    made = {lib: register(lib.library) for lib in (torch, internals)}
    try:
        cases = st.tuples(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
                          st.sampled_from([0, 1, -2, 0.5]), st.integers(0, 99))

        def check_one(case):
            (shapes, _), alpha, seed = case
            g = torch.Generator().manual_seed(seed)
            x, y = (torch.randn(s, generator=g) for s in shapes)
            theirs = torch.ops.exercise_axpy.axpy(x, y, alpha)
            ours = internals.ops.exercise_axpy.axpy(internals.from_torch(x), internals.from_torch(y), alpha)
            assert torch.allclose(theirs, alpha * x + y), "torch's axpy (your kernel) is not alpha * x + y"
            assert tuple(ours.shape) == tuple(theirs.shape), f"shape {tuple(ours.shape)}, torch's {tuple(theirs.shape)}"
            assert torch.allclose(ours.to_torch(), theirs), f"yours {ours.tolist()}, torch's {theirs.tolist()}"
        return run_generated("check_axpy_operator", cases, check_one)
    finally:
        for library in made.values():
            library._destroy()
