"""internals: PyTorch's layers rebuilt small, in Python and Numba, for the course.

``import internals as torch`` runs the course's snippets. The package mirrors PyTorch's tree:
``c10`` (dtypes, storage, TensorImpl), ``aten`` (dispatcher, TensorIterator, native kernels for
CPU and CUDA), and the Tensor frontend.
"""
from . import _cuda_env  # first: decides GPU or simulator before Numba is imported  # noqa: F401

from .c10.scalar_type import (dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16,  # noqa: A004
                              float32, float64, promote_types, result_type, can_cast, get_default_dtype,
                              set_default_dtype)
from .c10.device import device
from .c10.tensor_impl import strided
from .c10.storage import UntypedStorage
from ._tensor import Tensor, Size
from .aten.native import copy as _copy, elementwise as _elementwise, reduce_ops as _reduce_ops  # noqa: F401
from .aten.native import linear_algebra as _linear_algebra, softmax as _softmax_ops, tensor_shape as _shape  # noqa: F401
from .aten.native.tensor_factories import (tensor, empty, empty_strided, zeros, ones, full, arange, linspace, eye,
                                           rand, randn, empty_like, zeros_like, ones_like, full_like, rand_like,
                                           randn_like, from_numpy, manual_seed, Generator)
from ._interop import from_torch
from . import cuda, testing
from .cuda import OutOfMemoryError  # torch.OutOfMemoryError is torch.cuda.OutOfMemoryError
from ._functional import *  # noqa: F401,F403  torch.add, torch.exp, ... as functions

half, float, double, short, int, long = float16, float32, float64, int16, int32, int64  # noqa: A001

__version__ = "0.1.0"
