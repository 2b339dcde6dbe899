"""The sparse layouts' operators (``aten/src/ATen/native/sparse``).

``sparse_tensor`` builds COO tensors, converts them to and from dense, coalesces them and
answers their accessors; ``sparse_tensor_math`` adds and multiplies them. Both run their loops
through ``kernels(device)``: ``sparse/cpu/kernels.py`` or ``sparse/cuda/kernels.py``.
``sparse_csr_tensor`` and ``sparse_csr_tensor_math`` do the same for the compressed layouts
(CSR, CSC, BSR, BSC), with operators over their three tensors.
"""
from ..dispatch_stub import loops


def kernels(device):
    """The sparse loops compiled for ``device`` (the DispatchStub jump)."""
    return loops(device, "kernels", package=__name__)
