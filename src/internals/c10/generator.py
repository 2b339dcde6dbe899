"""Random number generators (``c10/core/GeneratorImpl.h``, ``aten/src/ATen/CPUGeneratorImpl.cpp``).

A Generator holds the random state that ``rand``/``randn``/``randint``/... draw from; a call
without one uses the default generator, which ``manual_seed`` reseeds. On the CPU the state is
torch's mt19937 (:mod:`.mt19937`), so the same seed gives torch's stream of 32-bit words, and
the distribution kernels (``aten/native/cpu/distribution_kernels.py``) turn them into torch's
values. Three more pieces of state travel with it, as in torch:

- the seed it was last seeded with (``initial_seed``);
- a cached second normal sample: the scalar normal path draws two values at a time (Box-Muller)
  and keeps the second for the next call, in double (and a float slot torch keeps but no CPU
  kernel fills);
- a lock. The generator is shared by every thread, and a kernel holds the lock for all the
  draws of one operation (torch's ``std::lock_guard<std::mutex> lock(generator->mutex_)``), so
  two threads never interleave within one tensor's values or corrupt the engine.

``get_state``/``set_state`` use torch's byte layout (``CPUGeneratorImplState``: the legacy
``THGenerator`` struct, words widened to 64 bits, then the float cache), so a state moves
between the two libraries in either direction.

c10 knows neither tensors nor CUDA, so two things come from the layers above, registered at
import: how a state becomes a uint8 tensor and back (ATen, :func:`set_state_tensor_conversion`),
and the state of a non-CPU generator (ATen's Philox for cuda, :func:`register_device_state`),
as ATen registers its generators with c10 in torch. ``manual_seed`` and the other module-level
functions that also reach the CUDA generators live in :mod:`internals.random` (``torch/random.py``).
"""
import os
import threading

import numpy as np

from . import mt19937
from .device import as_device

__all__ = ["Generator", "default_generator", "register_device_state", "set_state_tensor_conversion"]

DEFAULT_SEED = 67280421310721     # c10::detail::default_rng_seed_val: a new Generator's seed

# CPUGeneratorImplState, byte for byte (x86-64 alignment: the int fields pad to 8 before a double).
STATE_DTYPE = np.dtype({
    "names": ["the_initial_seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float_normal_sample", "is_next_float_normal_sample_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", mt19937.N), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056,
})


# Set by the layers above (see the module docstring).
_device_states = {}               # device type -> (get_state(gen) -> uint8 array, set_state(gen, array))
_state_to_tensor = None           # uint8 NumPy array -> uint8 CPU tensor
_state_from_tensor = None         # a state argument -> its bytes as a uint8 NumPy array (checks its type)


def register_device_state(device_type, get_state, set_state):
    """How generators on ``device_type`` read and write their state as bytes."""
    _device_states[device_type] = (get_state, set_state)


def set_state_tensor_conversion(to_tensor, from_tensor):
    """How ``get_state`` wraps bytes in a tensor and ``set_state`` reads bytes from one."""
    global _state_to_tensor, _state_from_tensor
    _state_to_tensor, _state_from_tensor = to_tensor, from_tensor


def _device_state(device):
    if device.type not in _device_states:
        raise RuntimeError(f"no generator state is registered for device type '{device.type}'")
    return _device_states[device.type]


def _unsigned_seed(seed):
    """torch takes any int64 or uint64 seed and keeps it as uint64 (a negative one wraps)."""
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & ((1 << 64) - 1)


class Generator:
    """``torch.Generator``: a seedable random state for one device.

    ``Generator()`` (or ``device="cpu"``) is torch's CPU generator, mt19937; ``device="cuda"``
    is torch's Philox generator (:mod:`internals.aten.native.cuda.philox`), a seed and an
    offset into a counter-based stream.
    """

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._lock = threading.RLock()
        self.manual_seed(DEFAULT_SEED)

    # ---------------------------------------------------------------- seeding
    def manual_seed(self, seed):
        """Reseed; clears the cached normal samples (``set_current_seed``). Returns ``self``."""
        seed = _unsigned_seed(seed)
        with self._lock:
            self._seed = seed
            self._next_double_normal = None
            self._next_float_normal = None
            if self.device.type == "cpu":
                self._words, self._cursor = mt19937.seeded_state(seed)
            else:
                self._offset = 0     # Philox: a new seed restarts the stream at its beginning
        return self

    def seed(self):
        """Reseed from the operating system's entropy and return the new seed."""
        value = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(value)
        return value

    def initial_seed(self):
        return self._seed

    # ---------------------------------------------------------------- state in torch's format
    def get_state(self):
        """The state as a uint8 tensor in torch's layout (``CPUGeneratorImpl::get_state``)."""
        if self.device.type != "cpu":
            return _state_to_tensor(_device_state(self.device)[0](self))
        pod = np.zeros((), STATE_DTYPE)
        with self._lock:
            pod["the_initial_seed"] = self._seed
            pod["left"], pod["next"] = self._cursor
            pod["seeded"] = 1
            pod["state"] = self._words
            if self._next_double_normal is not None:
                pod["normal_is_valid"], pod["normal_y"] = 1, self._next_double_normal
            if self._next_float_normal is not None:
                pod["is_next_float_normal_sample_valid"] = 1
                pod["next_float_normal_sample"] = self._next_float_normal
        return _state_to_tensor(np.frombuffer(pod.tobytes(), np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state` (or from torch's ``get_rng_state``)."""
        raw = _state_from_tensor(new_state)
        if self.device.type != "cpu":
            _device_state(self.device)[1](self, raw)
            return self
        if raw.size != STATE_DTYPE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_DTYPE.itemsize} but found the "
                               f"input RNG state size to be {raw.size}")
        pod = raw.view(STATE_DTYPE)[0]
        left, nxt = int(pod["left"]), int(pod["next"]) & 0xFFFFFFFF
        if not (pod["seeded"] & 0xFF and 0 < left <= mt19937.N and nxt <= mt19937.N):
            raise RuntimeError("Invalid mt19937 state")
        with self._lock:
            self._seed = int(pod["the_initial_seed"])
            self._words = pod["state"].astype(np.uint32)    # torch keeps the low 32 bits of each word
            self._cursor = np.array([left, nxt], np.int64)
            self._next_double_normal = float(pod["normal_y"]) if pod["normal_is_valid"] else None
            self._next_float_normal = float(pod["next_float_normal_sample"]) \
                if pod["is_next_float_normal_sample_valid"] else None
        return self

    # ---------------------------------------------------------------- raw draws (caller holds _lock)
    def random(self, n):
        """The next ``n`` 32-bit words (``CPUGeneratorImpl::random``), as uint32."""
        out = np.empty(n, np.uint32)
        mt19937.draw32(self._words, self._cursor, out)
        return out

    def engine_state(self):
        """The mt19937 state itself, ``(words, cursor)`` with cursor ``[left, next]``, for a kernel
        that draws as it goes, not knowing beforehand how many words it needs (``sample_poisson``)."""
        return self._words, self._cursor

    def random64(self, n):
        """The next ``n`` 64-bit values, each from two words, the first the high half (``random64``)."""
        words = self.random(2 * n).astype(np.uint64)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # ---------------------------------------------------------------- pickling (torch's THPGenerator_reduce)
    def __reduce__(self):
        """Rebuilt from its device, then given (initial seed, Philox offset or None, state):
        ``torch.save`` of a generator, and ``copy.deepcopy``, keep its place in the stream."""
        offset = None if self.device.type == "cpu" else self._offset
        return type(self), (self.device,), (self.initial_seed(), offset, self.get_state())

    def __setstate__(self, state):
        seed, offset, generator_state = state
        self.manual_seed(seed)
        if offset is not None:
            self._offset = offset
        self.set_state(generator_state)

    def __repr__(self):                     # torch's Generator is a C type of torch._C
        return f"<internals._C.Generator object at {hex(id(self))}>"


default_generator = Generator()

