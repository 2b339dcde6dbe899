"""The Mersenne Twister behind torch's CPU generator (``aten/src/ATen/core/MT19937RNGEngine.h``).

torch keeps its own mt19937 rather than ``std::mt19937``: 624 32-bit words of state, seeded
from the low 32 bits of the seed with Knuth's multiplier, regenerated as one block of 624 when
the last word is used, and each word "tempered" (four shift-and-mask steps) on the way out.
``left`` counts down the words still unused (it starts at 1, so the very first draw regenerates
the block) and ``next`` points at the next one; both travel in ``get_state``.

The engine is Numba-compiled: one call draws a whole array of words, which is how every
distribution kernel uses it (a kernel knows in advance how many words it needs).
"""
import functools

import numpy as np
from numba import njit

__all__ = ["N", "seeded_state", "draw32"]

N = 624          # words of state (MERSENNE_STATE_N)
M = 397          # the twist's offset (MERSENNE_STATE_M)
MATRIX_A = np.uint32(0x9908B0DF)
UPPER = np.uint32(0x80000000)
LOWER = np.uint32(0x7FFFFFFF)


@functools.lru_cache(maxsize=32)
def _seeded_words(seed32):
    """``init_with_uint32``: word j from word j-1, wrapped to 32 bits as C++'s uint32 arithmetic.

    Plain Python, not a Numba kernel: 623 steps take a fraction of a millisecond, and the
    default generator is seeded while ``import internals`` runs, where compiling or loading a
    kernel would start Numba's whole CPU target in every process. Kept for a few recent seeds,
    since tests reseed with the same few values again and again."""
    words = [seed32]
    for j in range(1, N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    words = np.array(words, np.uint32)
    words.flags.writeable = False
    return words


def seeded_state(seed):
    """The 624 words, ``left`` = 1 and ``next`` = 0 of a fresh engine seeded with ``seed``."""
    return _seeded_words(seed & 0xFFFFFFFF).copy(), np.array([1, 0], np.int64)


@njit(cache=True, inline="always")
def _twist(u, v):
    mixed = (u & UPPER) | (v & LOWER)
    return (mixed >> np.uint32(1)) ^ (MATRIX_A if v & np.uint32(1) else np.uint32(0))


@njit(cache=True)
def _next_state(words):
    """Regenerate all 624 words at once (``next_state``)."""
    for j in range(N - M):
        words[j] = words[j + M] ^ _twist(words[j], words[j + 1])
    for j in range(N - M, N - 1):
        words[j] = words[j + M - N] ^ _twist(words[j], words[j + 1])
    words[N - 1] = words[M - 1] ^ _twist(words[N - 1], words[0])


@njit(cache=True)
def draw32(words, cursor, out):
    """Fill ``out`` (uint32) with the engine's next ``len(out)`` outputs; ``cursor`` is [left, next]."""
    left, nxt = cursor[0], cursor[1]
    for i in range(out.shape[0]):
        left -= 1
        if left == 0:
            _next_state(words)
            left, nxt = N, 0
        y = words[nxt]
        nxt += 1
        y ^= y >> np.uint32(11)
        y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
        y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
        y ^= y >> np.uint32(18)
        out[i] = y
    cursor[0], cursor[1] = left, nxt
