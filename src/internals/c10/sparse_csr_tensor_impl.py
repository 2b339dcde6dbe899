"""SparseCsrTensorImpl: a tensor in one of the compressed layouts (``aten/src/ATen/SparseCsrTensorImpl.h``).

One class serves the four layouts, as torch's does; the layout is a field of the tensor, not of
the class. A tensor of sizes ``(*batch, rows, cols, *dense)`` owns three strided tensors:

* ``compressed_indices``, shape ``(*batch, n + 1)``: for CSR and BSR, ``n`` is the number of rows
  (of blocks, for BSR), and entry ``i`` is where row ``i``'s entries start among the stored ones;
  for CSC and BSC the same for columns. It starts at 0 and ends at ``nnz``.
* ``plain_indices``, shape ``(*batch, nnz)``: each stored entry's column (CSR, BSR) or row (CSC,
  BSC), sorted and distinct within a row (column).
* ``values``, shape ``(*batch, nnz, *block, *dense)``: each entry's value; ``block`` is the block
  size ``(r, c)`` of BSR and BSC, nothing for CSR and CSC.

torch calls the first two ``crow_indices``/``col_indices`` for CSR and BSR and
``ccol_indices``/``row_indices`` for CSC and BSC. Like a COO tensor it has no storage: torch
refuses its strides, its contiguity and its data pointer, and so does this class.
"""
from .grad_mode import InferenceMode
from .tensor_impl import COMPRESSED_LAYOUTS, TensorImplBase, VersionCounter, compute_key_set, sparse_bsc, sparse_bsr

__all__ = ["SparseCsrTensorImpl"]


class SparseCsrTensorImpl(TensorImplBase):
    __slots__ = ("sizes", "compressed_indices", "plain_indices", "values", "layout", "version_counter",
                 "is_wrapped_number", "key_set", "__weakref__")
    storage_offset = 0

    def __init__(self, sizes, compressed_indices, plain_indices, values, layout):
        """The three tensors must already be checked against ``sizes`` (``sparse_compressed_tensor``
        does): the conversions index dense outputs with them."""
        assert layout in COMPRESSED_LAYOUTS
        self.sizes = tuple(int(s) for s in sizes)
        self.compressed_indices = compressed_indices
        self.plain_indices = plain_indices
        self.values = values
        self.layout = layout
        self.version_counter = VersionCounter()
        self.is_wrapped_number = False
        self.key_set = compute_key_set(values.device.type, layout, InferenceMode.is_enabled())

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    @property
    def batch_dim(self):
        return self.plain_indices.dim() - 1

    @property
    def blocksize(self):
        """The block of BSR and BSC (``values.shape[batch + 1 : batch + 3]``); None for CSR, CSC."""
        if self.layout in (sparse_bsr, sparse_bsc):
            return tuple(self.values.shape[self.batch_dim + 1:self.batch_dim + 3])
        return None

    @property
    def dense_dim(self):
        return len(self.sizes) - self.batch_dim - 2

    @property
    def sparse_dim(self):
        return 2

    @property
    def nnz(self):
        return self.plain_indices.shape[-1]

    @property
    def strides(self):
        raise RuntimeError(f"Sparse {self._short_name()} tensors do not have strides")

    @property
    def storage(self):
        raise RuntimeError("Cannot access storage of SparseCsrTensorImpl")

    def is_contiguous(self):
        raise RuntimeError(f"Sparse {self._short_name()} tensors do not have is_contiguous")

    def _short_name(self):
        """CSR, CSC, BSR or BSC: torch's messages name the layout."""
        return self.layout.name[len("sparse_"):].upper()

    def is_non_overlapping_and_dense(self):
        return False
