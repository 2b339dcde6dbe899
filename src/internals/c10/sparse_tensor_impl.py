"""SparseTensorImpl: a tensor stored as a list of coordinates and values (``aten/src/ATen/SparseTensorImpl.h``).

A sparse COO tensor of sizes ``(s_0, ..., s_{S-1}, d_0, ..., d_{D-1})`` has ``sparse_dim`` S and
``dense_dim`` D, and owns two ordinary strided tensors:

* ``indices``, int64 of shape ``(S, nnz)``: column j is the coordinate, in the S sparse dims, of
  the j-th stored entry;
* ``values``, of shape ``(nnz, d_0, ..., d_{D-1})``: that entry's value (a dense block when D > 0).

Every coordinate not listed holds zero. *Coalesced* means the columns are sorted by linear index
and no coordinate appears twice; an uncoalesced tensor may list a coordinate several times, and
the element is then the sum of its entries.

Its memory is that of ``indices`` and ``values``: there is no storage, so nothing a strided kernel
could index. torch 2.13 answers ``stride()`` with zeros and ``storage_offset()`` with 0, and refuses
to hand out a storage or a data pointer; so does this class.
"""
from .grad_mode import InferenceMode
from .tensor_impl import TensorImplBase, VersionCounter, compute_key_set, sparse_coo

__all__ = ["SparseTensorImpl"]


class SparseTensorImpl(TensorImplBase):
    __slots__ = ("sizes", "indices", "values", "coalesced", "version_counter", "is_wrapped_number", "key_set",
                 "__weakref__")
    layout = sparse_coo
    storage_offset = 0

    def __init__(self, sizes, indices, values, coalesced):
        """``indices`` and ``values`` must already be checked against ``sizes`` (``sparse_coo_tensor`` does):
        kernels index dense outputs with these coordinates and do no bounds checks of their own."""
        self.sizes = tuple(int(s) for s in sizes)
        self.indices = indices
        self.values = values
        self.coalesced = bool(coalesced)
        self.version_counter = VersionCounter()
        self.is_wrapped_number = False
        self.key_set = compute_key_set(values.device.type, sparse_coo, InferenceMode.is_enabled())

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.dim() - 1

    @property
    def nnz(self):
        return self.values.shape[0]

    @property
    def strides(self):
        return (0,) * len(self.sizes)      # what torch's ``stride()`` returns for a sparse tensor

    @property
    def storage(self):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    def is_contiguous(self):
        return False

    def is_non_overlapping_and_dense(self):
        return False
