"""Random operators: ``uniform_``, ``normal_``, ``random_``, ``exponential_``, ``cauchy_``,
``log_normal_``, ``geometric_``, ``poisson``, ``bernoulli``, ``multinomial``, ``randperm``,
``dropout`` and the factories built on them.

Mirrors ``aten/src/ATen/native/Distributions.cpp`` and ``DistributionTemplates.h`` (argument
checks, which kernel runs), ``cpu/DistributionTemplates.h`` (how many words each value takes),
``TensorFactories.cpp`` (``randperm``, ``rand``, ``randn``, ``randint``) and ``Dropout.cpp``.

A kernel holds its generator's lock while it draws every word it needs, turns them into values
with :mod:`.cpu.distribution_kernels`, and writes the values in the order torch's
``cpu_serial_kernel`` visits the elements: TensorIterator's order, which for a transposed or
sliced tensor is memory order, not row-major order. On ``cuda`` the words come from the
tensor's Philox generator instead (:mod:`internals.aten.native.cuda.philox`).
"""
import math

import numpy as np

from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ...c10.generator import default_generator
from ...c10.memory_format import contiguous_format
from ...c10.storage import UntypedStorage, bytes_of
from ...c10.tensor_impl import TensorImpl
from .. import dispatcher
from ..tensor_iterator import assert_no_internal_overlap, broadcast_shapes, output_layout
from . import dispatch_stub as stub
from .complex_helper import view_as_real
from .copy import copy_, cpu, to
from .cpu import distribution_kernels as k
from .cuda.philox import default_cuda_generator, philox_normal, philox_uniform
from .resize import resize_output
from .tensor_factories import from_host, wrap_scalar

__all__ = ["uniform_", "normal_", "random_", "random_from", "random_to", "exponential_", "cauchy_", "log_normal_",
           "geometric_", "_s_poisson_cpu", "bernoulli_float",
           "bernoulli_tensor", "bernoulli", "bernoulli_p", "multinomial", "randperm", "randint", "randint_low", "rand",
           "randn",
           "rand_like", "randn_like", "normal_tensor_float", "normal_float_tensor", "normal_tensor_tensor",
           "normal_float_float", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_"]

_F32 = np.float32
# numeric limits in torch's terms: mantissa digits (with the implicit bit) and the largest finite value
_DIGITS = {st.float16: 11, st.bfloat16: 8, st.float32: 24, st.float64: 53}
_FLOAT_MAX = {st.float16: 65504.0, st.bfloat16: 3.3895313892515355e38, st.float32: 3.4028234663852886e38,
              st.float64: 1.7976931348623157e308}


# ---------------------------------------------------------------------- shared steps
def _generator(generator, device):
    """``get_generator_or_default``: the tensor's device must match the generator's."""
    if generator is None:
        if device.type == "cuda":
            return default_cuda_generator(device)
        return default_generator
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _mt19937(generator, self, name):
    """The CPU generator for a kernel that only has a CPU (mt19937) version."""
    if self.device.type != "cpu":
        raise NotImplementedError(f"{name} on {self.device.type}: internals follows torch's Philox stream for "
                                  "uniform_ and normal_ only; draw on the CPU and move the result")
    return _generator(generator, self.device)


def _words32(gen, n):
    return gen.random(n)


def _words64(gen, n):
    return gen.random64(n)


def _place(self, values, operands=()):
    """Write ``values`` (one per element, in TensorIterator's visiting order) into ``self``.

    The values are laid out as a dense tensor whose strides follow the iteration order (the
    layout ``output_layout`` gives), then copied: element i of the order lands on element i.
    """
    values = np.ascontiguousarray(values)
    shape = tuple(self.shape)
    strides = output_layout([self._impl] + [o._impl for o in operands], shape)
    dtype = st.from_numpy_dtype(values.dtype)
    storage = UntypedStorage(values.nbytes, "cpu", data=bytes_of(values) if values.size else np.empty(0, np.uint8))
    source = type(self)._from_impl(TensorImpl(storage, shape, strides, 0, dtype))
    copy_(self, source)
    return self


def _as_float32(values, dtype):
    """A double result as torch stores it in a float-like tensor: ``static_cast<scalar_t>``
    goes through float for float16 and bfloat16 (their constructors take a float)."""
    return values if dtype is st.float64 else values.astype(_F32)


def _round(values, dtype):
    """float32 values rounded (to nearest even) to float16 or bfloat16, kept as float32."""
    if dtype is st.float16:
        return values.astype(np.float16).astype(_F32)
    if dtype is st.bfloat16:
        bits = values.view(np.uint32)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & np.uint32(0xFFFF0000)
        return bits.view(_F32)
    return values


def _check_floating(self, kernel_name):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{self.dtype.torch_name}\'')


# ---------------------------------------------------------------------- uniform_
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """``uniform_impl_`` then ``uniform_kernel``: one word per value (two for double); a value
    that rounds up to ``to`` in the tensor's dtype becomes ``from``. A complex tensor is filled as
    its real view: real and imaginary parts from one stream, each in [from, to)."""
    if self.dtype.is_complex:
        uniform_(view_as_real(self), from_, to, generator=generator)
        return self
    _check_floating(self, "check_uniform_bounds")
    stub.refuse_float8("check_uniform_bounds", self)
    low, high = -_FLOAT_MAX[self.dtype], _FLOAT_MAX[self.dtype]
    for name, value in (("from", from_), ("to", to)):
        if not low <= value <= high:
            raise RuntimeError(f"{name} is out of bounds for {st.type_meta_name(self.dtype)}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    if to - from_ > high:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{self.dtype.torch_name}>::max(), "
                           f"but found to={to} and from={from_} which result in to-from to exceed the limit")
    n = self.numel()
    if n == 0:
        return self
    gen = _generator(generator, self.device)
    double = self.dtype is st.float64
    if self.device.type == "cuda":
        values = philox_uniform(gen, n, from_, to, double)
    else:
        with gen._lock:
            fused = stub.fma_contracted()
            values = k.uniform_double(_words64(gen, n), float(from_), float(to), fused) if double else \
                k.uniform_float(_words32(gen, n), _F32(from_), _F32(to), fused)
    if double:
        to_s, from_s = float(to), float(from_)
    else:
        values = _round(values, self.dtype)
        to_s, from_s = (_round(np.array([v], _F32), self.dtype)[0] for v in (to, from_))
    values[values == to_s] = from_s
    return _place(self, values)


# ---------------------------------------------------------------------- normal_
def _avx2_normal_fill():
    """Whether torch's ``normal_stub`` is the AVX2 build (on an avx512 CPU too: that stub is
    registered without an AVX-512 version), whose ``NormalFill16<float>`` is vectorised."""
    return stub.cpu_capability() in ("avx2", "avx512")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """``normal_kernel``: 16 or more contiguous values take ``normal_fill`` (chunks of 16,
    Box-Muller in float for the float dtypes), others the scalar path (double Box-Muller, one
    value kept for the next call)."""
    if not std >= 0:        # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self.dtype.is_complex:
        # ``normal_impl_``: the real and imaginary parts are drawn as one real tensor of twice the
        # length, each part with half the variance, so that E|z - mean|² is std²
        normal_(view_as_real(self), mean, std / math.sqrt(2), generator=generator)
        return self
    _check_floating(self, "normal_kernel_cpu")
    stub.refuse_float8("normal_kernel_cpu", self)
    n = self.numel()
    if n == 0:
        return self
    gen = _generator(generator, self.device)
    if self.device.type == "cuda":
        return _place(self, _as_float32(philox_normal(gen, n, mean, std, self.dtype is st.float64), self.dtype))
    with gen._lock:
        if n >= 16 and self.is_contiguous():
            if self.dtype is st.float64:
                values = k.normal_fill_double(_words64(gen, k.normal_fill_words(n, True)), n, mean, std)
            else:
                whole = self.dtype is st.float32      # the 16-bit types fill through a 16-value buffer
                values = k.normal_fill_float(_words32(gen, k.normal_fill_words(n, whole)), n, mean, std, whole,
                                             _avx2_normal_fill())
        else:
            values = _as_float32(_normal_scalar(gen, n, mean, std), self.dtype)
    return _place(self, values)


def _normal_scalar(gen, n, mean, std):
    """``n`` values of ``normal_distribution<double>``, starting with the normal the generator
    kept from its last pair and keeping the second of the last pair drawn (the caller holds the
    lock)."""
    cached = gen._next_double_normal
    words = _words64(gen, k.normal_scalar_words(n, cached is not None))
    values, kept = k.normal_scalar(words, n, 0.0 if cached is None else cached, cached is not None,
                                   float(mean), float(std), stub.fma_contracted())
    gen._next_double_normal = None if np.isnan(kept) else float(kept)
    return values


# ---------------------------------------------------------------------- random_
def _update_from(frm, dtype):
    """``update_from``: move ``from`` up to the first integer the float dtype holds exactly."""
    plus_1 = int(_round(np.array([frm + 1], _F32), dtype)[0]) if dtype is not st.float64 else int(float(frm + 1))
    if plus_1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = plus_1 + (1 << (n - _DIGITS[dtype] + 1))
    return frm


def _update_to(to, dtype):
    minus_1 = int(_round(np.array([to - 1], _F32), dtype)[0]) if dtype is not st.float64 else int(float(to - 1))
    if minus_1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus_1 - (1 << (n - _DIGITS[dtype] + 1))
    return to


def _integral_bounds(dtype):
    if dtype is st.bool_:
        return 0, 1
    info = np.iinfo(dtype.numpy_type)
    return int(info.min), int(info.max)


def _check_from_to_in_range(frm, to_inc, dtype):
    if dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if dtype.is_floating_point:
        low, high = -_FLOAT_MAX[dtype], _FLOAT_MAX[dtype]
    else:
        low, high = _integral_bounds(dtype)
    for name, value in (("from", frm), ("to - 1", to_inc)):
        if not low <= value <= high:
            raise RuntimeError(f"{name} is out of bounds for {st.type_meta_name(dtype)}")


def _to_dtype_values(ints, dtype):
    """``static_cast<scalar_t>(int64)``: through float for the 16-bit floats; integer casts wrap."""
    if dtype is st.float64:
        return ints.astype(np.float64)
    if dtype.is_floating_point:
        return ints.astype(_F32)
    if dtype is st.bool_:
        return ints != 0
    return ints


def random_from(self, from_, to=None, *, generator=None):
    """``random_from_to_impl``: integers in [from, to) (``to`` None: up to the dtype's largest)."""
    dtype = self.dtype
    if to is not None:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        if dtype.is_complex:
            _check_from_to_in_range(from_, to - 1, dtype)
        if dtype.is_floating_point:
            from_, to = _update_from(from_, dtype), _update_to(to, dtype)
            if from_ >= to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={from_} >= to={to}")
        _check_from_to_in_range(from_, to - 1, dtype)
        return _random_from_to(self, (to - from_) % (1 << 64), from_, generator)
    if dtype.is_complex:
        if from_ != -(1 << 63):
            raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
        raise NotImplementedError(f'"random_full_64_bits_range_kernel_cpu" not implemented for \'{dtype.torch_name}\'')
    if from_ != -(1 << 63):
        if dtype.is_floating_point:
            to_inc = min(1 << _DIGITS[dtype], (1 << 63) - 1)
            from_ = _update_from(from_, dtype)
            if from_ >= to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={from_} > to_inc={to_inc}")
        else:
            to_inc = _integral_bounds(dtype)[1]
        _check_from_to_in_range(from_, to_inc, dtype)
        return _random_from_to(self, (to_inc - from_ + 1) % (1 << 64), from_, generator)
    if dtype not in (st.int64, st.float64, st.float32, st.bfloat16):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    return _random_from_to(self, 0, 0, generator)


def random_to(self, to, *, generator=None):
    return random_from(self, 0, to, generator=generator)


def _random_from_to(self, span, base, generator):
    """``uniform_int_from_to``: (word % span) + base, from 32-bit words when the span is below
    2**28 and 64-bit ones otherwise (span 0: the full 64-bit range, ``uniform_int_full_range``)."""
    n = self.numel()
    if n == 0:
        return self
    gen = _mt19937(generator, self, "random_")
    with gen._lock:
        words = _words64(gen, n) if span == 0 or span >= (1 << 28) else _words32(gen, n).astype(np.uint64)
    if span:
        words = words % np.uint64(span) + np.uint64(base % (1 << 64))
    return _place(self, _to_dtype_values(words.view(np.int64), self.dtype))


def random_(self, *, generator=None):
    """``uniform_int``: a word modulo the dtype's range of exactly representable integers
    (64-bit words for int64 and double, 32-bit ones otherwise; bool takes the lowest bit)."""
    dtype = self.dtype
    n = self.numel()
    if n == 0:
        return self
    if dtype.is_complex or dtype.is_float8:
        raise NotImplementedError(f'"random_kernel_cpu" not implemented for \'{dtype.torch_name}\'')
    gen = _mt19937(generator, self, "random_")
    with gen._lock:
        words = _words64(gen, n) if dtype in (st.int64, st.float64) else _words32(gen, n).astype(np.uint64)
    if dtype is st.bool_:
        return _place(self, (words & np.uint64(1)).astype(np.bool_))
    if dtype.is_floating_point:
        modulus = (1 << _DIGITS[dtype]) + 1
    else:
        modulus = _integral_bounds(dtype)[1] + 1
    return _place(self, _to_dtype_values((words % np.uint64(modulus)).view(np.int64), dtype))


# ---------------------------------------------------------------------- exponential_
def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self.numel() == 0:       # torch's kernel, which checks the dtype, runs on no empty tensor
        return self
    if not self.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {self.dtype.torch_name}")
    n = self.numel()
    if n == 0:
        return self
    gen = _mt19937(generator, self, "exponential_")
    with gen._lock:
        values = k.exponential_double(_words64(gen, n), float(lambd))
    return _place(self, _as_float32(values, self.dtype))


# ---------------------------------------------------------------------- cauchy_, log_normal_, geometric_
# ``cauchy_impl_``, ``log_normal_impl_`` and ``geometric_impl_`` (native/DistributionTemplates.h) check
# the parameter, then the kernels of cpu/DistributionTemplates.h draw one double distribution value
# per element, in TensorIterator's order, and cast it to the tensor's dtype.
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """``cauchy_distribution<double>``: one 64-bit word per value. The dtype is checked before an
    empty tensor returns, in the C++ type's name (``int``, ``c10::complex<float>``)."""
    if not sigma > 0.0:       # NaN too
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {st.type_meta_name(self.dtype)}")
    n = self.numel()
    if n == 0:
        return self
    gen = _mt19937(generator, self, "cauchy_")
    with gen._lock:
        values = k.cauchy_double(_words64(gen, n), float(median), float(sigma), stub.fma_contracted())
    return _place(self, _as_float32(values, self.dtype))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """``lognormal_distribution<double>``: exp of the scalar normal path's values (two 64-bit
    words per pair, the second normal kept in the generator for the next call), whatever the
    tensor's size: torch's ``normal_fill`` serves ``normal_`` only."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    n = self.numel()
    if n == 0:
        return self
    _check_floating(self, "log_normal_cpu")
    gen = _mt19937(generator, self, "log_normal_")
    with gen._lock:
        values = k.log_normal_double(_normal_scalar(gen, n, mean, std))
    return _place(self, _as_float32(values, self.dtype))


# AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16): the integers, not bool or the wider unsigned ones
_GEOMETRIC_TYPES = (st.uint8, st.int8, st.int16, st.int32, st.int64, st.float16, st.bfloat16, st.float32,
                    st.float64)


def geometric_(self, p, *, generator=None):
    """``geometric_distribution<double>``: the number of trials up to the first success, one
    64-bit word per value; an integer tensor takes it as an integer."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    n = self.numel()
    if n == 0:
        return self
    if self.dtype not in _GEOMETRIC_TYPES:
        raise NotImplementedError(f'"geometric_cpu" not implemented for \'{self.dtype.torch_name}\'')
    gen = _mt19937(generator, self, "geometric_")
    with gen._lock:
        values = k.geometric_double(_words64(gen, n), float(p))
    if not self.dtype.is_floating_point:
        return _place(self, values.astype(np.int64))
    return _place(self, _as_float32(values, self.dtype))


# ---------------------------------------------------------------------- poisson
def _s_poisson_cpu(self, generator=None):
    """``_s_poisson_cpu``: a new contiguous tensor of ``sample_poisson(rate)`` for each rate, in
    TensorIterator's order. A sample takes as many 64-bit draws as its rejection loop (large
    rates) or product of uniforms (small ones) needs; a negative or NaN rate stops the kernel
    with torch's error, after the draws of the rates before it."""
    out = dispatcher.call("zeros_like", self, memory_format=contiguous_format)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{self.dtype.torch_name}\'')
    n = self.numel()
    if n == 0:
        return out
    rates = _values_in_order(self, out).astype(np.float64)
    gen = _mt19937(generator, self, "poisson")
    with gen._lock:
        samples, invalid = k.sample_poisson(rates, *gen.engine_state())
    if invalid >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _place(out, _to_dtype_values(samples, self.dtype), (self,))


# ---------------------------------------------------------------------- bernoulli
def _zero_one(draws, dtype):
    return draws if dtype is st.bool_ else draws.astype(np.float64 if dtype is st.float64 else np.int64)


def bernoulli_float(self, p=0.5, *, generator=None):
    """``bernoulli_(p)`` for a number p: a uniform per element, 1 where it is below p. On the CPU
    a double uniform; on cuda cuRAND's (0, 1] uniform, float except for double tensors (torch's
    ``bernoulli_scalar_cuda_``). (Older torch wheels drew from MKL's MCG31 stream on Intel CPUs;
    2.13's has no such path and draws this way on every CPU.)"""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    n = self.numel()
    if n == 0:
        return self
    _refuse_complex(self, "bernoulli_scalar_cpu_")
    assert_no_internal_overlap(self._impl)
    gen = _generator(generator, self.device)
    if self.device.type == "cuda":
        double = self.dtype is st.float64
        uniforms = philox_uniform(gen, n, 0.0, 1.0, double)
        return _place(self, _zero_one(k.bernoulli_below(uniforms, (float if double else _F32)(p)), self.dtype))
    with gen._lock:
        uniforms = k.uniform_double(_words64(gen, n), 0.0, 1.0, True)       # [0, 1): fused or not, the same
    return _place(self, _zero_one(k.bernoulli_below(uniforms, p), self.dtype))


def bernoulli_tensor(self, p, *, generator=None):
    """``bernoulli_(p)`` for a tensor p (broadcast to ``self``): a double uniform per element when
    p is double, else a float one compared with p in float."""
    n = self.numel()
    if n == 0:
        return self
    _refuse_complex(self, "bernoulli_tensor_cpu_self_")
    _refuse_complex(p, "bernoulli_tensor_cpu_p_")
    assert_no_internal_overlap(self._impl)
    p = dispatcher.call("expand", cpu(p), list(self.shape), implicit=False)
    probs = _values_in_order(p, self)
    if not ((probs >= 0) & (probs <= 1)).all():       # NaN fails both
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    gen = _mt19937(generator, self, "bernoulli_")
    with gen._lock:
        if p.dtype is st.float64:
            uniforms = k.uniform_double(_words64(gen, n), 0.0, 1.0, True)
        else:
            uniforms = k.uniform_float(_words32(gen, n), _F32(0.0), _F32(1.0), True)
            probs = probs.astype(_F32)
    return _place(self, _zero_one(k.bernoulli_below(uniforms, probs), self.dtype), (p,))


def _refuse_complex(t, kernel_name):
    """torch's bernoulli kernels dispatch over the real and boolean types only."""
    if t.dtype.is_complex:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{t.dtype.torch_name}\'')


def _values_in_order(t, out):
    """``t``'s values (same shape as ``out``) in the order TensorIterator visits ``out`` and ``t``."""
    strides = output_layout([out._impl, t._impl], tuple(out.shape))
    ordered = dispatcher.call("empty_strided", tuple(out.shape), strides, dtype=t.dtype, device="cpu")
    dispatcher.call("copy_", ordered, t, False)
    flat = dispatcher.call("as_strided", ordered, [ordered.numel()], [1], None)
    if t.dtype is st.bfloat16:
        flat = to(flat, st.float32)
    return flat._numpy().copy()


def _host(t):
    """``t``'s values as a NumPy array, the 16-bit floats read in float32 (the kernels' opmath)."""
    return cpu(to(t, st.float32) if t.dtype.is_reduced_float else t)._numpy()


def bernoulli(self, *, generator=None):
    """``bernoulli(p)``: a new tensor like p (contiguous), ``bernoulli_`` with p itself."""
    out = dispatcher.call("empty_like", self, memory_format=contiguous_format)
    return dispatcher.call("bernoulli_.Tensor", out, self, generator=generator)


def bernoulli_p(self, p, *, generator=None):
    out = dispatcher.call("empty_like", self, memory_format=contiguous_format)
    return dispatcher.call("bernoulli_.float", out, p, generator=generator)


# ---------------------------------------------------------------------- multinomial
def multinomial(self, num_samples, replacement=False, *, generator=None):
    """Without replacement (or one sample): the exponential race, argmax or topk of p / Exp(1)
    draws; with replacement: a binary search of double uniforms in each row's cumulative sum."""
    if not 0 < self.dim() <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {self.dtype.torch_name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = self.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_categories > (1 << 24):
        raise RuntimeError("number of categories cannot exceed 2^24")
    out_shape = (num_samples,) if self.dim() == 1 else (self.shape[0], num_samples)
    if 0 in out_shape:
        return dispatcher.call("empty.memory_format", out_shape, dtype=st.int64, device=self.device)
    rows = dispatcher.call("reshape", dispatcher.call("detach", self), [-1, n_categories])
    if not replacement or num_samples == 1:
        host = _host(rows)
        if not (np.all(host < np.inf) and np.all(host >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(host.sum(axis=1) == 0):     # the host copy: NumPy has no bfloat16 to sum in
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = dispatcher.call("exponential_", dispatcher.call("empty_like", self), 1.0, generator=generator)
        ratio = dispatcher.call("div.Tensor", dispatcher.call("detach", self), q)
        scores = _host(dispatcher.call("reshape", ratio, [-1, n_categories]))
        picks = np.argsort(-scores, axis=1, kind="stable")[:, :num_samples]
    else:
        picks = _with_replacement(rows, num_samples, generator)
    return from_host(np.ascontiguousarray(picks).reshape(out_shape).astype(np.int64), st.int64, self.device)


def _with_replacement(rows, num_samples, generator):
    """``multinomial_with_replacement_apply``: sums in the input's type (float for the 16-bit ones)."""
    compute = np.float64 if rows.dtype is st.float64 else _F32
    host = _host(rows).astype(compute)
    bad = ~((host >= 0) & np.isfinite(host))
    if bad.any():       # the first bad entry, row by row, as the C++ loop meets it: NaN fails ``>= 0`` first
        if not host.flat[np.argmax(bad)] >= 0:
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    cum = np.cumsum(host, axis=1, dtype=compute)     # sequential, in the input's type, like the C++ loop
    totals = cum[:, -1:].copy()
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum /= totals
    gen = _mt19937(generator, rows, "multinomial")
    with gen._lock:
        uniforms = k.uniform_double(_words64(gen, cum.shape[0] * num_samples), 0.0, 1.0, True)
    picks = np.empty((cum.shape[0], num_samples), np.int64)
    k.multinomial_with_replacement(cum, uniforms.reshape(cum.shape[0], num_samples), picks)
    return picks


# ---------------------------------------------------------------------- randperm
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``randperm`` and ``randperm.generator`` (``randperm_cpu``)."""
    dtype = dtype or st.int64
    out = dispatcher.call("empty.memory_format", (n,), dtype=dtype, layout=layout, device=device,
                          pin_memory=pin_memory)     # refuses a negative n first, as torch's at::empty
    if dtype.is_floating_point and n > (1 << _DIGITS[dtype]) + 1:
        raise RuntimeError(f"n cannot be greater than 2^{_DIGITS[dtype]}+1 for {dtype.torch_name} type.")
    st.checked_convert(max(n - 1, 0), dtype)    # ``check_supported_max_int_with_precision``: n-1 must fit
    if dtype is st.bool_ or dtype.is_complex:
        raise NotImplementedError(f'"randperm" not implemented for \'{dtype.torch_name}\'')
    stub.refuse_unlisted_dtypes("randperm", dtype, complex32=False)
    gen = _mt19937(generator, out, "randperm")
    with gen._lock:
        if n < (1 << 32) // 20:      # torch keeps its original algorithm below this
            perm = k.shuffle_small(_words32(gen, max(n - 1, 0)), n)
        else:
            perm = k.shuffle_inside_out(_words64(gen, n), n)
    return _place(out, _to_dtype_values(perm, dtype))


# ---------------------------------------------------------------------- factories (composite)
def _empty(size, dtype, layout, device, pin_memory):
    return dispatcher.call("empty.memory_format", size, dtype=dtype, layout=layout, device=device,
                           pin_memory=pin_memory)


def rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``rand`` and ``rand.generator``: ``empty`` then ``uniform_(0, 1)``."""
    out = _empty(size, dtype, layout, device, pin_memory)
    return dispatcher.call("uniform_", out, 0.0, 1.0, generator=generator)


def randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``randn`` and ``randn.generator``: ``empty`` then ``normal_(0, 1)``."""
    out = _empty(size, dtype, layout, device, pin_memory)
    return dispatcher.call("normal_", out, 0.0, 1.0, generator=generator)


def randint(high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``randint`` and ``randint.generator``: integers in [0, high)."""
    return randint_low(0, high, size, generator=generator, dtype=dtype, layout=layout, device=device,
                       pin_memory=pin_memory)


def randint_low(low, high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``randint.low`` and ``randint.low_generator``: ``empty`` then ``random_(low, high)``."""
    out = _empty(size, dtype or st.int64, layout, device, pin_memory)
    return dispatcher.call("random_.from", out, low, high, generator=generator)


def _like(self, dtype, layout, device, pin_memory, memory_format):
    return dispatcher.call("empty_like", self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                           memory_format=memory_format)


def rand_like(self, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """The kernel of ``rand_like`` and ``rand_like.generator``: the result takes ``self``'s layout."""
    out = _like(self, dtype, layout, device, pin_memory, memory_format)
    return dispatcher.call("uniform_", out, 0.0, 1.0, generator=generator)


def randn_like(self, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    out = _like(self, dtype, layout, device, pin_memory, memory_format)
    return dispatcher.call("normal_", out, 0.0, 1.0, generator=generator)


def randint_like(self, high, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=None):
    """``randint_like`` and ``randint_like.generator``: integers in [0, high), ``self``'s layout."""
    return randint_like_low(self, 0, high, generator=generator, dtype=dtype, layout=layout, device=device,
                            pin_memory=pin_memory, memory_format=memory_format)


def randint_like_low(self, low, high, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                     memory_format=None):
    """``randint_like.low_dtype`` (and with a generator): ``empty_like`` then ``random_(low, high)``."""
    out = _like(self, dtype, layout, device, pin_memory, memory_format)
    return dispatcher.call("random_.from", out, low, high, generator=generator)


# ---------------------------------------------------------------------- normal (DistributionTemplates.h)
# ``normal_impl`` and ``normal_out_impl``: standard (or std-scaled) normal values drawn into a
# contiguous result, then shifted and scaled by the tensor arguments with in-place ops. The draw
# is ``normal_``'s, so a seed gives torch's values.
def _check_std_tensor(std):
    if std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if not (std.numel() == 0 or dispatcher.call("ge.Scalar", std, 0.0).all().item()):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _check_std(std):
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal_tensor_float(mean, std=1.0, *, generator=None):
    """``normal.Tensor_float``: ``normal_(0, std)`` like ``mean``, plus ``mean``."""
    _check_std(std)
    out = dispatcher.call("empty_like", mean, memory_format=contiguous_format)
    dispatcher.call("normal_", out, 0.0, std, generator=generator)
    return dispatcher.call("add_.Tensor", out, mean)


def normal_float_tensor(mean, std, *, generator=None):
    """``normal.float_Tensor``: ``normal_(0, 1)`` like ``std``, times ``std``, plus ``mean``."""
    _check_std_tensor(std)
    return _scale_shift(dispatcher.call("empty_like", std, memory_format=contiguous_format), mean, std, generator)


def normal_tensor_tensor(mean, std, *, generator=None):
    """``normal.Tensor_Tensor``: ``normal_(0, 1)`` in the broadcast shape, times ``std``, plus ``mean``."""
    _check_std_tensor(std)
    out = _empty(broadcast_shapes(mean.shape, std.shape), mean.dtype, None, mean.device, None)
    return _scale_shift(out, mean, std, generator)


def _scale_shift(out, mean, std, generator):
    """``normal_(0, 1)`` into ``out``, times ``std``, plus ``mean`` (a number: a 0-d tensor like ``out``)."""
    dispatcher.call("normal_", out, 0.0, 1.0, generator=generator)
    if not isinstance(mean, TensorBase):
        mean = dispatcher.call("full", [], mean, dtype=out.dtype, device=out.device)
    return dispatcher.call("add_.Tensor", dispatcher.call("mul_.Tensor", out, std), mean)


def normal_float_float(mean, std, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """``normal.float_float``: ``empty(size)`` then ``normal_(mean, std)``."""
    out = _empty(size, dtype, layout, device, pin_memory)
    return dispatcher.call("normal_", out, mean, std, generator=generator)


# The out= overloads (``normal_out_impl`` in ``DistributionTemplates.h``) are not structured: the
# draws are made in ``out`` itself, in its dtype and memory order, and ``out`` is resized to its
# own sizes broadcast with the inputs' (so a mean of (2, 3) fills an ``out`` of (3,) resized).
def normal_tensor_float_out(mean, std=1.0, *, generator=None, out):
    _check_std(std)
    resize_output(out, broadcast_shapes(mean.shape, out.shape))
    dispatcher.call("normal_", out, 0.0, std, generator=generator)
    return dispatcher.call("add_.Tensor", out, mean)


def normal_float_tensor_out(mean, std, *, generator=None, out):
    _check_std_tensor(std)
    resize_output(out, std.shape)
    return _scale_shift(out, mean, std, generator)


def normal_tensor_tensor_out(mean, std, *, generator=None, out):
    _check_std_tensor(std)
    resize_output(out, broadcast_shapes(mean.shape, std.shape))
    return _scale_shift(out, mean, std, generator)


def normal_float_float_out(mean, std, size, *, generator=None, out):
    """``normal_out``: ``out.resize_(size)`` (no warning), then ``normal_(mean, std)``."""
    dispatcher.call("resize_", out, size)
    return dispatcher.call("normal_", out, mean, std, generator=generator)


# ---------------------------------------------------------------------- dropout (Dropout.cpp)
def dropout(input, p, train):
    """``_dropout_impl``: a mask from ``bernoulli_(1 - p)`` on a tensor like the input, scaled by
    1 / (1 - p), multiplied in (so autograd records a ``MulBackward0``). Nothing to do when not
    training or p is 0; p = 1 multiplies by a zero. (On cuda torch calls its fused
    ``native_dropout`` kernel instead, whose masks come from another use of the Philox stream:
    on cuda these masks are not torch's.)"""
    return _dropout(input, p, train, "mul.Tensor")


def dropout_(self, p, train):
    """The in-place form: the input itself is multiplied by the mask (``MulBackward0`` again)."""
    return _dropout(self, p, train, "mul_.Tensor")


def feature_dropout(input, p, train):
    """Channel dropout: the mask has one entry per (sample, channel), size 1 in every other dim,
    so a whole channel is kept or zeroed (``make_feature_noise``); otherwise as ``dropout``."""
    return _dropout(input, p, train, "mul.Tensor", feature=True)


def feature_dropout_(self, p, train):
    return _dropout(self, p, train, "mul_.Tensor", feature=True)


def alpha_dropout(input, p, train):
    """Dropout that keeps SELU's self-normalisation: a dropped element becomes SELU's negative
    saturation value, and the result is scaled and shifted back to zero mean and unit variance
    (``_dropout_impl<alpha_dropout=true>``): with mask m from ``bernoulli_(1 - p)``,
    a = 1 / sqrt((α²p + 1)(1 - p)) and b = (m - 1)·α·a + α·a·p, the result is x·(m·a) + b, one
    ``mul`` and one in-place ``add_`` (autograd records ``AddBackward0``)."""
    return _dropout(input, p, train, "mul.Tensor", alpha=True)


def alpha_dropout_(self, p, train):
    return _dropout(self, p, train, "mul_.Tensor", alpha=True)


def feature_alpha_dropout(input, p, train):
    """``alpha_dropout`` with one mask entry per (sample, channel), as ``feature_dropout``."""
    return _dropout(input, p, train, "mul.Tensor", feature=True, alpha=True)


def feature_alpha_dropout_(self, p, train):
    return _dropout(self, p, train, "mul_.Tensor", feature=True, alpha=True)


# SELU's alpha times its scale: the value SELU tends to as its input goes to minus infinity, negated
_SELU_SATURATION = 1.7580993408473766


def _feature_noise(input):
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    sizes = [input.shape[0], input.shape[1]] + [1] * (input.dim() - 2)
    return dispatcher.call("new_empty", input, sizes, dtype=None, layout=None, device=None, pin_memory=None)


def _dropout(input, p, train, multiply, feature=False, alpha=False):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = dispatcher.call("zeros", (), dtype=input.dtype, device=input.device)
        return dispatcher.call(multiply, input, zero)
    noise = _feature_noise(input) if feature else dispatcher.call("empty_like", input)
    dispatcher.call("bernoulli_.float", noise, 1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_SATURATION * _SELU_SATURATION * p + 1) * (1 - p))
        shift = dispatcher.call("add.Tensor", noise, wrap_scalar(-1))
        dispatcher.call("mul_.Tensor", shift, wrap_scalar(_SELU_SATURATION * a))
        dispatcher.call("add_.Tensor", shift, wrap_scalar(_SELU_SATURATION * a * p))
        dispatcher.call("mul_.Tensor", noise, wrap_scalar(a))
        return dispatcher.call("add_.Tensor", dispatcher.call(multiply, input, noise), shift)
    dispatcher.call("div_.Tensor", noise, wrap_scalar(1 - p))      # the number wrapped, as the parser does
    return dispatcher.call(multiply, input, noise)
