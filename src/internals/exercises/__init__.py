"""Checkers for the book's build-it exercises: ``check_<name>(fn)`` runs the reader's ``fn`` against
torch (or the package's own piece) on seeded or generated cases, prints one summary line, or prints
what failed on which input.

One module per chapter, each re-exported here: ``ch01_tensors`` ... ``ch04_kernels``, ``dispatch``
(5), ``autograd`` (6), ``memory`` (7), ``codebase`` (8), ``training`` (9), ``cnn`` (10), ``compile`` (11), ``processes``
(12). The
shared loops are in ``_runner``, the adversarial cases they draw in ``_strategies``.

Each chapter's core exercise rebuilds a piece the package runs on; ``use_mine(name, fn)`` (module
``plug``) puts the reader's version in its place, so later cells and chapters run on it.
"""
from .autograd import check_compute_dependencies, check_mul_backward, check_sum_to, check_tanh_backward
from .ch01_tensors import check_contiguous_strides
from .ch02_strides import check_broadcast_shapes, check_view_strides
from .ch03_storage import check_storage_size
from .ch04_kernels import check_coalesce_dimensions, check_reduction_loop, check_reorder_dimensions
from .cnn import check_conv2d, check_im2col
from .codebase import check_axpy_operator, check_register_operator
from .compile import check_fusion_pass, check_guard_key, check_memory_passes, check_pointwise_groups
from .dispatch import check_counting_mode, check_dispatch_key, check_dispatch_key_rule
from .memory import check_allocation_size, check_round_size
from .plug import PLUG_POINTS, plugged, restore, use_mine
from .processes import check_in_order
from .training import check_sgd_step

__all__ = ["check_contiguous_strides", "check_view_strides", "check_broadcast_shapes", "check_storage_size",
           "check_reduction_loop", "check_reorder_dimensions", "check_coalesce_dimensions", "check_dispatch_key",
           "check_dispatch_key_rule", "check_counting_mode", "check_mul_backward", "check_sum_to",
           "check_compute_dependencies",
           "check_tanh_backward", "check_round_size", "check_allocation_size", "check_axpy_operator",
           "check_register_operator",
           "check_sgd_step", "check_pointwise_groups", "check_guard_key", "check_fusion_pass",
           "check_memory_passes", "check_im2col", "check_conv2d",
           "check_in_order",
           "PLUG_POINTS", "use_mine", "restore", "plugged"]
