"""torch's CUDA random numbers: Philox4x32-10 with a seed and an offset (``CUDAGeneratorImpl.cpp``,
``aten/src/ATen/native/cuda/DistributionTemplates.h``, cuRAND's ``curand_philox4x32_x.h``).

Why a counter-based generator: thousands of GPU threads draw at once, and a sequential engine
(mt19937) would make each wait for the previous one's state. Philox computes output number k of
stream s directly, as ten rounds of multiply/xor over the 128-bit counter (k, s) and a 64-bit
key (the seed). So the whole state of a CUDA generator is two integers: the seed and an
*offset*, the number of counter steps already handed out. A kernel asks
``philox_cuda_state(increment)`` for the current offset and moves it forward (rounded up to a
multiple of 4) by the most draws any of its threads will make; thread ``idx`` then starts cuRAND
at (seed, subsequence=idx, offset), so no two kernels and no two threads share numbers.

``uniform_`` and ``normal_`` on ``cuda`` follow torch's ``distribution_nullary_kernel``: blocks of
256 threads, a grid of at most (multiprocessors x threads per multiprocessor / 256) blocks, each
thread producing 4 floats (2 doubles) per ``curand4`` call in a grid-stride loop. The numbers are
computed here on the host (the same arithmetic, vectorised) and copied to the device.

What is exact and what can only be checked on a GPU:
- the Philox words, the seed/offset bookkeeping (``get_state``: 16 bytes, seed then offset, as
  torch's) and ``uniform_`` follow the definitions bit for bit, *given the GPU's multiprocessor
  count* (it sets the grid, hence which thread draws which element); on the simulator an H100's
  132 multiprocessors of 2048 threads are assumed;
- ``normal_`` uses cuRAND's Box-Muller, whose device ``logf``/``__sincosf`` are the GPU's own
  approximations; the host's libm stands in for them, so values agree to a few ulps, not bits.
The torch wheel this course tests against is CPU-only, so neither is checked against torch here.

The module-level functions (``manual_seed``, ``get_rng_state``, ...) are the frontend's, in
:mod:`internals.cuda.random` (``torch/cuda/random.py``).
"""
import numpy as np
from numba import njit

from ....c10.generator import Generator, register_device_state
from ..scalar_ops import fma

__all__ = ["default_cuda_generator", "philox_get_state", "philox_set_state", "philox_cuda_state", "philox4x32_10",
           "philox_uniform", "philox_uniform01", "philox_normal"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85      # the key's per-round increments (Weyl sequence)
_LOW32 = np.uint64(0xFFFFFFFF)
BLOCK = 256
SMS, THREADS_PER_SM = 132, 2048         # an H100, where the simulator has no real device to ask
_generators = {}


def default_cuda_generator(device):
    """``getDefaultCUDAGenerator(index)``: one per device, created on first use."""
    index = device.index or 0
    if index not in _generators:
        _generators[index] = Generator(device=f"cuda:{index}")
    return _generators[index]


def philox_get_state(gen):
    """``CUDAGeneratorImpl::get_state``: the seed, then the offset, 8 bytes each."""
    return np.array([gen._seed, gen._offset], np.uint64).view(np.uint8).copy()


def philox_set_state(gen, raw):
    if raw.size != 16:
        raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {raw.size}")
    seed, offset = raw.view(np.uint64)
    with gen._lock:
        gen._seed, gen._offset = int(seed), int(offset)


register_device_state("cuda", philox_get_state, philox_set_state)   # c10's Generator has no Philox of its own


def philox_cuda_state(gen, increment):
    """``philox_cuda_state``: the offset a kernel starts from; the generator moves on by ``increment``
    rounded up to a multiple of 4 (one Philox call yields 4 words). Caller holds the lock."""
    offset = gen._offset
    gen._offset += (increment + 3) // 4 * 4
    return gen._seed, offset


def philox4x32_10(counters, seed):
    """Philox4x32-10 of an (n, 4) uint32 array of counters under the 64-bit key ``seed``."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = _M0 * c[0], _M1 * c[2]      # 32 x 32 -> 64-bit products: high and low halves
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & _LOW32, (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1),
             p0 & _LOW32]
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


def _launch(numel, per_call):
    """``calc_execution_policy``: the grid's thread count and the offset increment of one kernel."""
    blocks = min((numel + BLOCK - 1) // BLOCK, SMS * (THREADS_PER_SM // BLOCK))
    threads = BLOCK * blocks
    calls = (numel - 1) // (threads * per_call) + 1      # curand4 calls per thread
    return threads, calls, calls * 4


def _curand4_words(gen, numel, per_call):
    """The 4 words each thread's curand4 calls give, and where each of a call's ``per_call``
    values lands: element ``idx + threads * (per_call * call + k)``."""
    threads, calls, increment = _launch(numel, per_call)
    with gen._lock:
        seed, offset = philox_cuda_state(gen, increment)
    idx = np.repeat(np.arange(threads, dtype=np.uint64), calls)
    step = np.tile(np.arange(calls, dtype=np.uint64), threads) + np.uint64(offset // 4)
    counters = np.stack([step & _LOW32, step >> np.uint64(32), idx & _LOW32, idx >> np.uint64(32)], 1)
    words = philox4x32_10(counters.astype(np.uint32), seed).reshape(threads, calls, 4)
    return words, threads


def _scatter(values, threads, numel):
    """values[thread, call, k] -> element thread + threads * (per_call * call + k), those < numel."""
    t, calls, per_call = values.shape
    place = np.arange(t)[:, None, None] + threads * (per_call * np.arange(calls)[None, :, None]
                                                     + np.arange(per_call)[None, None, :])
    out = np.empty(numel, values.dtype)
    keep = place < numel
    out[place[keep]] = values[keep]
    return out


_INV32 = np.float32(2.0 ** -32)
_INV53 = 2.0 ** -53


def _uniform01(words, double):
    """``curand_uniform4`` (floats in (0, 1]) or ``curand_uniform2_double`` (two doubles from
    four words: ``x ^ (y << 21)``, 53 bits)."""
    if not double:
        return words.astype(np.float32) * _INV32 + _INV32 / np.float32(2)
    x, y = words[..., 0::2].astype(np.uint64), words[..., 1::2].astype(np.uint64)
    z = x ^ (y << np.uint64(21))
    return z.astype(np.float64) * _INV53 + _INV53 / 2


@njit(cache=True)
def _affine(values, scale, shift):
    out = np.empty_like(values)
    for i in range(values.shape[0]):
        out[i] = fma(values[i], scale, shift)       # nvcc fuses a * b + c by default
    return out


def philox_uniform(gen, numel, low, high, double):
    """``uniform_kernel`` (CUDA): u * (high - low) + low, where u is cuRAND's (0, 1] uniform; a
    value equal to ``high`` becomes ``low`` (the caller rounds to the dtype and applies that)."""
    words, threads = _curand4_words(gen, numel, 2 if double else 4)
    u = _scatter(_uniform01(words, double), threads, numel)
    typ = np.float64 if double else np.float32
    return _affine(u, typ(high - low), typ(low))


def philox_uniform01(gen, numel, double):
    """cuRAND's (0, 1] uniforms themselves, one per element in the grid-stride order (float32, or
    float64 from ``curand_uniform2_double``): kernels that scale them their own way read these."""
    words, threads = _curand4_words(gen, numel, 2 if double else 4)
    return _scatter(_uniform01(words, double), threads, numel)


def philox_normal(gen, numel, mean, std, double):
    """``normal_kernel`` (CUDA): cuRAND's Box-Muller over pairs of uniforms, times std plus mean."""
    words, threads = _curand4_words(gen, numel, 2 if double else 4)
    typ = np.float64 if double else np.float32
    if double:
        u = _uniform01(words, True)
        a, b = u[..., 0], u[..., 1] * (2 * np.pi)
    else:
        a = words[..., 0::2].astype(np.float32) * _INV32 + _INV32 / np.float32(2)
        two_pi_inv = np.float32(2.0 ** -32 * 2 * np.pi)
        b = words[..., 1::2].astype(np.float32) * two_pi_inv + two_pi_inv / np.float32(2)
    radius = np.sqrt(typ(-2) * np.log(a))
    pairs = np.stack([np.sin(b) * radius, np.cos(b) * radius], axis=-1).reshape(words.shape[0], words.shape[1], -1)
    return _affine(_scatter(pairs.astype(typ), threads, numel), typ(std), typ(mean))
