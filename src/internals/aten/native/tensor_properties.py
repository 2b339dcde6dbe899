"""A tensor's metadata as operators (``aten/src/ATen/native/TensorProperties.cpp``).

``sym_size.int``, ``sym_stride.int``, ``sym_numel`` and ``sym_storage_offset`` return one number
of a tensor's metadata, a SymInt when tracing made it a symbol. Eager code reads ``x.shape``
directly and never calls them; a tracer records them as graph nodes where a later call uses a
size that is a symbol (``nonzero``'s row count), so the graph reads that size again each run.
"""

__all__ = ["sym_numel", "sym_size", "sym_storage_offset", "sym_stride"]


def sym_size(self, dim):
    return self.size(dim)


def sym_stride(self, dim):
    return self.stride(dim)


def sym_numel(self):
    return self.numel()


def sym_storage_offset(self):
    return self.storage_offset()
