"""internals: PyTorch's layers rebuilt small, in Python and Numba, for the course.

``import internals as torch`` runs the course's snippets. The package mirrors PyTorch's tree:
``c10`` (dtypes, storage, TensorImpl), ``aten`` (dispatcher, TensorIterator, native kernels for
CPU and CUDA), and the Tensor frontend.
"""
import math as _math

from . import (
    _compile_notice,  # imports Numba only in install(), after _cuda_env has run
    _cuda_env,  # first: decides GPU or simulator before Numba is imported  # noqa: F401
)

_compile_notice.install()  # before any kernel compiles (importing the package compiles one)
from . import _kernel_cache  # imports Numba: after _cuda_env has settled its environment

_kernel_cache.install()  # before any kernel is compiled or loaded: checkouts of the same sources share them
from . import _numba_inlining

_numba_inlining.install()  # before any kernel compiles: inlining a helper costs its size, not its size squared
from . import (
    _python_arg_parser,
    _tensor,
    _tensor_base,
)
from ._meta_device import register_meta_fallback as _register_meta_fallback
from ._meta_device import register_meta_kernels as _register_meta_kernels
from ._tensor import Size, Tensor
from ._tensor_str import set_printoptions
from .amp.autocast_mode import register_autocast_kernels as _register_autocast_kernels
from .aten import dispatcher as _dispatcher
from .aten.conjugate_fallback import register_conjugate_fallback as _register_conjugate_fallback
from .aten.fallbacks import register_core_fallbacks as _register_core_fallbacks
from .aten.native.tensor_factories import from_numpy_lifted as from_numpy
from .aten.negate_fallback import register_negate_fallback as _register_negate_fallback
from .aten.register_native_functions import register_native_functions as _register_native_functions
from .autograd.ad_inplace_or_view import register_inplace_kernels as _register_inplace_kernels
from .autograd.profiler import register_record_function_ops as _register_record_function_ops
from .autograd.variable_type_manual import register_manual_kernels as _register_autograd_kernels
from .c10.device import device
from .c10.generator import Generator, default_generator
from .c10.memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from .c10.scalar_type import (  # noqa: A004
    bfloat16,
    can_cast,
    complex32,
    complex64,
    complex128,
    dtype,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .c10.scalar_type import bool_ as bool
from .c10.storage import UntypedStorage
from .c10.tensor_impl import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .utils._python_dispatch import register_python_fallbacks as _register_python_fallbacks


def _initialize():
    """Fill the tables, in order, before anything runs an operator (torch's static registrars and
    ``_C._initExtension``). Each operator's dispatch table is computed once, at the end."""
    with _dispatcher.tables_computed_once():
        _fill_tables()


def _fill_tables():
    # 1. The Python class new tensors get (THPVariableClass), and its generated operator methods.
    _tensor_base._set_tensor_class(Tensor)
    _python_arg_parser.set_tensor_class(Tensor)       # the class whose tensors never override
    _tensor._attach_generated_methods()
    # 2. Backend fallbacks first: a kernel registered later overrides its key's fallback.
    _register_core_fallbacks()
    _register_python_fallbacks()
    _register_meta_fallback()
    # 3. The operators of native_functions.yaml with their backend and composite kernels.
    _register_native_functions()
    _register_conjugate_fallback()      # their fallthroughs name native operators
    _register_negate_fallback()
    _register_meta_kernels()
    # 4. The layers above the backends: ADInplaceOrView, then Autograd, then Autocast kernels.
    _register_inplace_kernels()
    _register_autograd_kernels()
    _register_autocast_kernels()
    # 5. Operators of other namespaces: the profiler's record_function.
    _register_record_function_ops()


_initialize()

# isort: split
# The modules below look operators up in the filled tables when they are imported (the
# decompositions of internals._decomp, for one), so they come after the registration.
from . import (
    _C,
    __future__,  # torch.__future__ (the package's module, not Python's)
    amp,
    autograd,
    cuda,
    distributions,
    func,  # torch.func
    library,
    linalg,  # torch.linalg
    multiprocessing,
    nn,
    optim,
    profiler,
    special,  # torch.special
    testing,
    utils,
)
from ._deterministic import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from ._dynamo import compile  # noqa: A004  torch.compile
from ._functional import *  # noqa: F401,F403  torch.add, torch.exp, ... as functions
from ._interop import from_torch
from ._legacy_tensor_types import *  # noqa: F401,F403  torch.FloatTensor, torch.LongTensor, ...
from ._ops import ops
from ._type_info import finfo, iinfo
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .aten.native.sparse.sparse_csr_tensor import (
    sparse_bsc_tensor,
    sparse_bsr_tensor,
    sparse_compressed_tensor,
    sparse_csc_tensor,
    sparse_csr_tensor,
)
from .aten.native.sparse.sparse_tensor import sparse_coo_tensor
from .aten.parallel import get_num_threads, set_num_threads
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .cuda import OutOfMemoryError  # torch.OutOfMemoryError is torch.cuda.OutOfMemoryError
from .cuda import amp as _cuda_amp  # noqa: F401  (internals.cuda.amp, as torch.cuda.amp)
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .serialization import load, save
from .storage import TypedStorage
from .utils import _device as _utils_device  # noqa: F401  (registers ``with device(...)``, as torch's Device.cpp uses it)
from .utils import checkpoint as _utils_checkpoint  # noqa: F401  (torch imports torch.utils.checkpoint too)
from .utils import data as _utils_data  # noqa: F401  (internals.utils.data, as torch.utils.data)
from .utils import deterministic as _utils_deterministic  # noqa: F401  (torch imports it too)
from .utils._device import get_default_device, set_default_device

half, float, double, short, int, long = float16, float32, float64, int16, int32, int64  # noqa: A001
chalf, cfloat, cdouble = complex32, complex64, complex128

__version__ = "0.1.0"

# torch's numeric constants (torch/__init__.py binds the same Python floats; ``float`` is a dtype here)
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
newaxis = None
