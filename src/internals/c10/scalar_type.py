"""Dtypes and type promotion.

Mirrors ``c10/core/ScalarType.h`` (the dtypes and ``promoteTypes``) and
``aten/src/ATen/native/TypeProperties.cpp`` (``result_type`` with its three priority groups).
"""
import functools

import numpy as np

from .exception import warn_once
from .sym import SymBool, SymFloat, SymInt

__all__ = ["dtype", "complex32", "warn_if_experimental", "promote_types", "result_type", "can_cast", "opmath_type",
           "get_default_dtype", "set_default_dtype",
           "checked_convert", "default_complex_dtype", "to_complex", "to_real"]

# Categories, in the order promotion climbs them: bool < integer < floating < complex.
BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A scalar type: its name, item size, category and how its bytes look to NumPy.

    ``numpy_type`` is the NumPy type used to view a storage's bytes. NumPy has no bfloat16, so a
    bfloat16 storage is viewed as uint16 bit patterns and the kernels convert through float32,
    as ATen does with its ``opmath_type``.
    """
    __module__ = "internals"     # the public name, as ``torch.dtype.__module__`` is ``torch``

    def __init__(self, name, torch_name, itemsize, category, numpy_type, signed=True):
        self.name = name              # "float32"
        self.torch_name = torch_name  # "Float", the ScalarType name used in torch's error messages
        self.itemsize = itemsize
        self.category = category
        self.numpy_type = np.dtype(numpy_type)
        self.is_signed = signed
        # Plain attributes, not properties: kernels ask on every call, and a dtype never changes.
        self.is_floating_point = category == FLOATING
        self.is_complex = category == COMPLEX
        self.is_reduced_float = category == FLOATING and itemsize == 2   # float16, bfloat16: computed in float32
        self.is_float8 = category == FLOATING and itemsize == 1          # the float8 types: stored bits only

    def to_real(self):
        """``dtype.to_real()``: a complex dtype's component type; any other dtype is itself."""
        return to_real(self)

    def to_complex(self):
        """``dtype.to_complex()``: the complex dtype whose components are this float dtype."""
        return to_complex(self)

    def __repr__(self):
        return f"internals.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = dtype("bool", "Bool", 1, BOOL, np.bool_, signed=False)
uint8 = dtype("uint8", "Byte", 1, INTEGRAL, np.uint8, signed=False)
int8 = dtype("int8", "Char", 1, INTEGRAL, np.int8)
int16 = dtype("int16", "Short", 2, INTEGRAL, np.int16)
int32 = dtype("int32", "Int", 4, INTEGRAL, np.int32)
int64 = dtype("int64", "Long", 8, INTEGRAL, np.int64)
float16 = dtype("float16", "Half", 2, FLOATING, np.uint16)
bfloat16 = dtype("bfloat16", "BFloat16", 2, FLOATING, np.uint16)
float32 = dtype("float32", "Float", 4, FLOATING, np.float32)
float64 = dtype("float64", "Double", 8, FLOATING, np.float64)
# A complex number is two floats side by side (``c10::complex<T>``, ``c10/util/complex.h``):
# real part first, so NumPy's complex64/complex128 read the same bytes.
complex64 = dtype("complex64", "ComplexFloat", 8, COMPLEX, np.complex64)
complex128 = dtype("complex128", "ComplexDouble", 16, COMPLEX, np.complex128)

# complex32 (``torch.chalf``, ScalarType ComplexHalf): two float16 parts, 4 bytes. torch calls its
# support experimental (it warns once when one is made) and its CPU kernels cover data movement,
# casts and fills; internals' do the same through the float16 pairs (``view_as_real``), and the
# dtype stays out of ALL_DTYPES, the dtypes the arithmetic kernels are compiled for. NumPy has no
# complex32: its storage is viewed as uint32, one word per element, which only copies move.
complex32 = dtype("complex32", "ComplexHalf", 4, COMPLEX, np.uint32)

# uint16, uint32, uint64 (``torch.uint16``...): torch gives them "limited support" -- creation,
# casts, copies, indexing, and the few kernels compiled for them. They promote with nothing (a
# mix raises), and, as complex32, they stay out of ALL_DTYPES: an arithmetic loop refuses them
# (TensorIterator's ``for_each``), and only loops that move elements accept them.
uint16 = dtype("uint16", "UInt16", 2, INTEGRAL, np.uint16, signed=False)
uint32 = dtype("uint32", "UInt32", 4, INTEGRAL, np.uint32, signed=False)
uint64 = dtype("uint64", "UInt64", 8, INTEGRAL, np.uint64, signed=False)
LIMITED_UNSIGNED = (uint16, uint32, uint64)

# The float8 types (``c10/util/Float8_e4m3fn.h`` and its siblings): one byte, exponent and
# mantissa bits named in the type (e4m3: 4 and 3). "fn" is finite (no infinity), "uz" unsigned
# zero (one NaN, 0x80, and no -0), e8m0fnu an exponent alone (a power of two, no sign). torch's CPU
# kernels for them cover casts, data movement, ``==``/``!=``, ``abs`` and ``*``; their storage is
# viewed as uint8 bit patterns and converted through float32 (``copy.py``), and, as complex32,
# they stay out of ALL_DTYPES and promote with nothing.
float8_e4m3fn = dtype("float8_e4m3fn", "Float8_e4m3fn", 1, FLOATING, np.uint8)
float8_e5m2 = dtype("float8_e5m2", "Float8_e5m2", 1, FLOATING, np.uint8)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", "Float8_e4m3fnuz", 1, FLOATING, np.uint8)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", "Float8_e5m2fnuz", 1, FLOATING, np.uint8)
float8_e8m0fnu = dtype("float8_e8m0fnu", "Float8_e8m0fnu", 1, FLOATING, np.uint8, signed=False)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES + (complex32, *LIMITED_UNSIGNED, *FLOAT8)}
# the Python types a ``dtype`` argument may be (``THPDtype`` from ``PyFloat_Type`` and the others)
PYTHON_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128}


def _by_name(name):
    return _BY_NAME[name]


_default_dtype = float32


def get_default_dtype():
    """The dtype Python floats become (``torch.get_default_dtype``)."""
    return _default_dtype


def set_default_dtype(d):
    global _default_dtype
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def default_complex_dtype():
    """``get_default_complex_dtype`` (``c10/core/DefaultDtype.cpp``): the complex type of the
    default dtype's width: complex128 under float64, complex32 under float16, else complex64."""
    return to_complex(_default_dtype)


# complex32's warning is a TORCH_WARN_ONCE (``c10/exception.py``), the function's name its key


def warn_if_experimental(d):
    """``empty_generic``'s warning (EmptyTensor.cpp), once per process, when a complex32 tensor
    is made."""
    if d is complex32:
        warn_once("warn_if_experimental", "ComplexHalf support is experimental and many operators don't support "
                  "it yet.", UserWarning, stacklevel=3)



def to_complex(d):
    """``toComplexType``: float64 -> complex128, float16 -> complex32; float32 and bfloat16 ->
    complex64 (c10 has no complex bfloat16)."""
    if d.is_complex:
        return d
    if d.category != FLOATING or d.is_float8:
        raise RuntimeError(f"Unknown Complex ScalarType for {d.torch_name}")
    return {float64: complex128, float16: complex32}.get(d, complex64)


def to_real(d):
    """``toRealValueType``: complex32 -> float16, complex64 -> float32, complex128 -> float64;
    others unchanged."""
    return {complex32: float16, complex64: float32, complex128: float64}.get(d, d)


def from_numpy_dtype(np_dtype):
    return _dtype_of_numpy(np.dtype(np_dtype))


@functools.lru_cache(maxsize=None)      # a handful of dtypes, asked on every wrapped scalar
def _dtype_of_numpy(np_dtype):
    if np_dtype == np.float16:
        return float16
    for d in ALL_DTYPES + LIMITED_UNSIGNED:
        if d.numpy_type == np_dtype and d is not float16 and d is not bfloat16:
            return d
    raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported types are: "
                    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")


def _check_limited_unsigned(a, b):
    """uint16, uint32 and uint64 promote only with a float (which wins): torch refuses the rest."""
    if (a in LIMITED_UNSIGNED or b in LIMITED_UNSIGNED) and FLOATING not in (a.category, b.category):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a.torch_name} and {b.torch_name}")


def _check_float8(a, b):
    """``promoteTypes`` refuses a float8 type with any other type (``c10/core/ScalarType.cpp``)."""
    if a.is_float8 or b.is_float8:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{a.torch_name} and {b.torch_name}")


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category.

    The rules ``promoteTypes`` encodes in its lookup table: the same type stays; bool yields to
    anything; integers widen to fit both (uint8 with a signed type needs the next signed size);
    any float beats any integer; the two 16-bit floats meet at float32; a complex type beats
    the rest, with parts wide enough for both (complex64 with float64 is complex128).
    """
    if a is b:
        return a
    _check_float8(a, b)
    _check_limited_unsigned(a, b)
    if a is bool_ or b is bool_:
        return b if a is bool_ else a
    if a.is_complex or b.is_complex:
        return to_complex(promote_types(to_real(a), to_real(b)))
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == FLOATING:
        if a.itemsize == b.itemsize:    # float16 with bfloat16: neither holds the other
            return float32
        return a if a.itemsize > b.itemsize else b
    # Both integral.
    if a.is_signed == b.is_signed:
        return a if a.itemsize > b.itemsize else b
    unsigned, signed = (a, b) if not a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32, 4: int64, 8: int64}[unsigned.itemsize]


def opmath_type(dtype):
    """``at::opmath_type`` (``ATen/OpMathType.h``): the dtype a kernel computes in.

    float16 and bfloat16 compute in float32 and round once when the result is stored (Numba has
    no float16 arithmetic on the CPU either), complex32 in complex64; every other dtype computes
    in itself.
    """
    if dtype.is_reduced_float or dtype.is_float8:     # float8: converted to float32 and back, as c10 does
        return float32
    return complex64 if dtype is complex32 else dtype


def can_cast(from_, to):
    """``canCast``: may a result of dtype ``from_`` be written into ``to`` (in-place ops)?"""
    return not (from_.category > to.category)


def _combine_categories(higher, lower):
    """``combine_categories``: a lower priority group wins only with a higher category; a complex
    lower group over a float higher one keeps the float's width (float32 tensor + 1j: complex64)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return to_complex(higher) if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool_ or lower.category == FLOATING:
        return promote_types(higher, lower)
    return higher


# Each dtype's C++ type in ATen's kernels, as torch's error messages name it.
_CPP_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
              "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
              "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "complex32": "c10::complex<c10::Half>", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", **{d.name: f"c10::{d.torch_name}" for d in FLOAT8}}
# Each dtype's ``caffe2::TypeMeta`` name (the C++ type demangled by the compiler), as torch's
# messages about a tensor's dtype print it.
_TYPE_META_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
                    "int32": "int", "int64": "long int", "uint16": "unsigned short", "uint32": "unsigned int",
                    "uint64": "unsigned long", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                    "float32": "float", "float64": "double", "complex32": "c10::complex<c10::Half>",
                    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                    **{d.name: f"c10::{d.torch_name}" for d in FLOAT8}}


def type_meta_name(d):
    """``d`` as ``caffe2::TypeMeta::name()`` prints it."""
    return _TYPE_META_NAMES[d.name]


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
              "float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float8_e4m3fnuz": 240.0, "float8_e5m2fnuz": 57344.0,
              "float8_e8m0fnu": 2.0 ** 127}
# the float types without an infinity: ``c10::overflows`` lets inf through only where the type has one
_NO_INFINITY = frozenset(("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"))


def checked_convert(value, d):
    """A Python number (a fill value, an ``alpha``) as dtype ``d``, as ``Scalar::to<T>()`` converts it.

    As ``c10::checked_convert`` (``c10/util/TypeCast.h``), a value out of ``d``'s range is an
    error, not a silent wrap-around or inf, with two allowances: inf and NaN may become a
    float, and an integer down to -max may become an unsigned type, wrapping around (for uint8,
    -1 is 255, which lets ``a.add(b, alpha=-3)`` subtract). A float becomes an integer by
    truncation. Returns a NumPy scalar (for float16/bfloat16, a float32 one: kernels compute in
    float32).
    """
    if type(value) in (int, bool):   # alpha=1 and friends come back on every call: remember them
        return _remembered(type(value), value, d)
    return _converted(value, d)


@functools.lru_cache(maxsize=1024)
def _remembered(kind, value, d):      # ``kind`` keeps True and 1 apart: they hash alike
    return _converted(value, d)       # (floats stay out: -0.0 == 0.0, and NaN equals nothing)


def _converted(value, d):
    if isinstance(value, (complex, np.complexfloating)) and not d.is_complex:
        # ``overflows`` for a complex source: a nonzero imaginary part cannot become real
        if d is bool_:
            value = bool(value)
        elif value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[d.name]} without overflow")
        else:
            value = value.real
    if d is not bool_ and not _fits(value, d):
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[d.name]} without overflow")
    with np.errstate(invalid="ignore"):         # 2.0**63 as an int64, which NumPy warns of
        return np.array(value).astype(opmath_type(d).numpy_type)[()]


def _fits(value, d):
    if d.is_complex:               # each component as the component type
        value = complex(value)
        return _fits(value.real, to_real(d)) and _fits(value.imag, to_real(d))
    if d is float8_e8m0fnu:
        return _fits_e8m0fnu(value)
    if d.category == FLOATING:
        infinite_ok = abs(value) == float("inf") and d.name not in _NO_INFINITY
        return value != value or infinite_ok or abs(value) <= _FLOAT_MAX.get(d.name, float("inf"))
    info = np.iinfo(d.numpy_type)
    if isinstance(value, (float, np.floating)):
        # compared as doubles, as ``c10::overflows``: int64's max is the double 2**63, so 2.0**63
        # fits (and converts as x86 does, to -2**63); NaN and inf fail
        return float(info.min) <= value <= float(info.max)
    lowest = info.min if d.is_signed else -int(info.max)
    return lowest <= value <= info.max


def _fits_e8m0fnu(value):
    """``c10::overflows`` into e8m0fnu, an unsigned type whose lowest value is 2**-127: a float
    below that (0.0 and every negative) overflows; an integer may be negative down to -max, as
    for the unsigned integers (it wraps); NaN fits, inf does not (the type has no infinity)."""
    if isinstance(value, (float, np.floating)):
        return value != value or 2.0 ** -127 <= value <= 2.0 ** 127
    return -(2 ** 127) <= value <= 2 ** 127


def unpack_int_scalar(value):
    """A Python int given for a Scalar: torch's parser reads it as a long long, else as an unsigned
    long long (``scalar_slow``), so anything outside [-2**63, 2**64) is Python's OverflowError."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("can't convert negative int to unsigned" if value < 0 else "int too big to convert")
    return value


# A Python int in [2**63, 2**64) is a uint64 Scalar in torch (``scalar_slow``), and its wrapped
# number a uint64 tensor. internals has no uint64 dtype: the wrapped number holds the same 64 bits
# as an int64 and carries this truthy mark in ``is_wrapped_number``. An integer dtype reads its
# bits (torch's uint64 -> intN cast wraps the same way), a floating one its unsigned value.
WRAPPED_UINT64 = "uint64"


def wrapped_uint64_value(impl):
    """The unsigned value of a wrapped number marked ``WRAPPED_UINT64``, else None."""
    if impl.is_wrapped_number is not WRAPPED_UINT64:
        return None
    return int(impl.storage.typed(int64)[impl.storage_offset]) % 2**64


def scalar_dtype(value):
    """The dtype of a Python scalar before promotion: bool, int64, float64 or complex128."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return float64
    if isinstance(value, (complex, np.complexfloating)):
        return complex128
    symbolic = {SymBool: bool_, SymInt: int64, SymFloat: float64}.get(type(value))
    if symbolic is not None:        # a number read from data while tracing: its type is known
        return symbolic
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


class ResultTypeState:
    """The three priority groups of ``result_type``: dimensioned, zero-dim, wrapped numbers."""

    def __init__(self):
        self.dim = self.zero = self.wrapped = None
        self.unsigned = False       # a wrapped uint64 took part

    def update(self, operand):
        impl = getattr(operand, "_impl", None)     # a tensor has one, a Python scalar not
        if impl is not None and impl.is_wrapped_number is WRAPPED_UINT64:
            self.unsigned = True
        if impl is not None and not impl.is_wrapped_number:
            d = impl.dtype
            if impl.sizes:
                self.dim = promote_types(self.dim, d) if self.dim else d
            else:
                self.zero = promote_types(self.zero, d) if self.zero else d
            return self
        d = impl.dtype if impl is not None else scalar_dtype(operand)
        if d.is_complex:             # a wrapped Python complex: the default complex dtype
            d = default_complex_dtype()
        elif d.category == FLOATING:   # a wrapped Python float counts as the default dtype
            d = _default_dtype
        self.wrapped = promote_types(self.wrapped, d) if self.wrapped else d
        return self

    def result(self):
        if self.unsigned and bool_ in (self.dim, self.zero):      # ``promoteTypes(Bool, UInt64)``
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                               "Bool and UInt64")
        return _combine_categories(self.dim, _combine_categories(self.zero, self.wrapped))


def result_type(*operands):
    """``torch.result_type`` over any mix of tensors and Python scalars."""
    state = ResultTypeState()
    for op in operands:
        state.update(op)
    return state.result()
