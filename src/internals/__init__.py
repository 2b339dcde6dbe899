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
from .c10.tensor_impl import strided, sparse_coo
from .c10.storage import UntypedStorage
from ._tensor import Tensor, Size
from .aten.register_native_functions import register_native_functions as _register_native_functions
from .aten.fallbacks import register_core_fallbacks as _register_core_fallbacks
from .autograd.ad_inplace_or_view import register_inplace_kernels as _register_inplace_kernels
from .utils._python_dispatch import register_python_fallbacks as _register_python_fallbacks
from .amp.autocast_mode import register_autocast_kernels as _register_autocast_kernels
from .aten.native.tensor_factories import tensor, from_numpy
from .c10.generator import manual_seed, seed, initial_seed, get_rng_state, set_rng_state, Generator, default_generator
_register_core_fallbacks()
_register_python_fallbacks()
_register_native_functions()
_register_inplace_kernels()
from .autograd.variable_type_manual import register_manual_kernels as _register_autograd_kernels
_register_autograd_kernels()
_register_autocast_kernels()
from ._interop import from_torch
from .utils import data as _utils_data  # noqa: F401  (internals.utils.data, as torch.utils.data)
from .serialization import save, load
from .aten.native.sparse.sparse_tensor import sparse_coo_tensor
from . import _C, amp, autograd, cuda, library, profiler, testing, utils
from . import linalg  # noqa: E402  math (issue 16)
from . import nn, optim
from .amp import autocast
from ._ops import ops
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled
from .cuda import OutOfMemoryError  # torch.OutOfMemoryError is torch.cuda.OutOfMemoryError
from ._functional import *  # noqa: F401,F403  torch.add, torch.exp, ... as functions
from ._dynamo import compile  # noqa: A004  torch.compile

half, float, double, short, int, long = float16, float32, float64, int16, int32, int64  # noqa: A001

__version__ = "0.1.0"
