"""Checkers for the book's build-it exercises: ``check_<name>(fn)`` runs the reader's ``fn`` against
torch on a seeded sample of cases, prints one summary line, or prints what failed on which
input and raises ``AssertionError``.

One module per chapter (``ch01_tensors``, ``ch02_strides``, ...), each re-exported here. The shared
machinery (case loop, report) is in ``_runner``.
"""
from .ch01_tensors import check_contiguous_strides
from .ch02_strides import check_broadcast_shapes, check_view_strides
from .ch03_storage import check_storage_size
from .ch04_kernels import check_reduction_loop

__all__ = ["check_contiguous_strides", "check_view_strides", "check_broadcast_shapes", "check_storage_size",
           "check_reduction_loop"]
