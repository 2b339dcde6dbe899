"""The sparse COO layout's operators (``aten/src/ATen/native/sparse``).

``sparse_tensor`` builds sparse tensors, converts them to and from dense, coalesces them and
answers their accessors; ``sparse_tensor_math`` adds and multiplies them. Both run their loops
through ``kernels(device)``: ``sparse/cpu/kernels.py`` or ``sparse/cuda/kernels.py``.
"""
from ..dispatch_stub import loops


def kernels(device):
    """The sparse loops compiled for ``device`` (the DispatchStub jump)."""
    return loops(device, "kernels", package=__name__)
