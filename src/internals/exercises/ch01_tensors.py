"""Chapter 1's core exercise: the strides of a freshly allocated tensor (``c10::contiguous_strides``,
which ``empty`` and every factory use). Plug a right answer in with
``internals.exercises.use_mine("contiguous_strides", fn)``: every new tensor then takes its
strides from it."""
from ._runner import run_generated
from ._strategies import sizes

__all__ = ["check_contiguous_strides"]


def check_contiguous_strides(fn):
    """``fn(shape) -> tuple of strides`` (in elements) of a contiguous tensor of ``shape``, as
    ``torch.empty(shape).stride()`` gives them: size-0 and size-1 dims included."""
    import torch  # torch is heavy: only a check needs it

    def check_one(shape):
        yours, torchs = fn(shape), tuple(torch.empty(shape).stride())
        assert yours is not None and tuple(yours) == torchs, f"yours {yours}, torch's {torchs}"
    return run_generated("check_contiguous_strides", sizes(), check_one, max_examples=150)
