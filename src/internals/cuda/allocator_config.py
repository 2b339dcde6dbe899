"""Allocator settings from ``PYTORCH_ALLOC_CONF`` (``c10/core/AllocatorConfig.{h,cpp}``,
``c10/cuda/CUDAAllocatorConfig.{h,cpp}``).

The setting string is a comma-separated list of ``key:value`` pairs, a value being one token or a
bracketed list, e.g. ``max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:4]``.
torch reads ``PYTORCH_CUDA_ALLOC_CONF`` first (``CUDAAllocatorConfig::instance``), then
``PYTORCH_ALLOC_CONF``, once, the first time the allocator is used;
``torch.cuda.memory._set_allocator_settings(s)`` parses a new string at any time.
"""
import os
import re

__all__ = ["AllocatorConfig", "get_config", "MB", "SIZE_MAX"]

MB = 1024 * 1024
SIZE_MAX = 2**64 - 1          # std::numeric_limits<size_t>::max(): "no limit"
kLargeBuffer = 20 * MB        # also the smallest max_split_size_mb accepted
kRoundUpPowerOfTwoIntervals = 16   # one divisions entry per power of two from 1 MiB to 64 GiB

# Keys torch accepts but that change nothing here (pinned host memory, locking, graphs...).
# Any other unknown key is an error, as in CUDAAllocatorConfig::parseArgs.
_ACCEPTED_AND_IGNORED = {
    "backend", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register", "pinned_num_register_threads",
    "pinned_use_background_threads", "pinned_reserve_segment_size_mb", "pinned_free_catch_all",
    "graph_capture_record_stream_reuse", "throw_on_cudamalloc_oom",
}


def _tokenize(env):
    """Split on ``, : [ ]`` (kept as tokens) and drop whitespace, as ``ConfigTokenizer`` does."""
    return [t for t in re.split(r"([,:\[\]])", re.sub(r"\s", "", env)) if t]


def _is_power_of_2(n):
    return n > 0 and n & (n - 1) == 0


class AllocatorConfig:
    """The values the caching allocator reads on every request (torch's config is global too)."""

    def __init__(self):
        self.max_split_size = SIZE_MAX
        self.max_non_split_rounding_size = kLargeBuffer
        self.roundup_power2_divisions_list = [0] * kRoundUpPowerOfTwoIntervals
        self.garbage_collection_threshold = 0.0
        self.expandable_segments = False
        self.per_process_memory_fraction = 1.0
        self.last_allocator_settings = ""

    def roundup_power2_divisions(self, size):
        """How many divisions apply to ``size``: the entry of its power-of-two interval (<1 MiB uses the first)."""
        index = max(0, size.bit_length() - 1 - 20)
        return self.roundup_power2_divisions_list[min(index, kRoundUpPowerOfTwoIntervals - 1)]

    def parse(self, env):
        """Apply a setting string (``AcceleratorAllocatorConfig::parseArgs`` then the CUDA one).

        As in torch, three settings return to their defaults unless the string sets them again.
        """
        self.max_split_size = SIZE_MAX
        self.roundup_power2_divisions_list = [0] * kRoundUpPowerOfTwoIntervals
        self.garbage_collection_threshold = 0.0
        self.last_allocator_settings = env
        tokens = _tokenize(env)
        i = 0
        while i < len(tokens):
            key = tokens[i]
            _expect(tokens, i + 1, ":")
            i = self._parse_value(key, tokens, i + 2)
            if i + 1 < len(tokens):
                _expect(tokens, i + 1, ",")
            i += 2

    def _parse_value(self, key, tokens, i):
        """Read the value of ``key`` starting at token ``i``; return the index of its last token."""
        if key == "max_split_size_mb":
            self.max_split_size = _megabytes(key, tokens, i) * MB
        elif key == "max_non_split_rounding_mb":
            self.max_non_split_rounding_size = _megabytes(key, tokens, i) * MB
        elif key == "garbage_collection_threshold":
            value = float(_token(tokens, i))
            if not 0.0 < value < 1.0:
                raise ValueError("garbage_collect_threshold is invalid, set it in (0.0, 1.0)")
            self.garbage_collection_threshold = value
        elif key == "roundup_power2_divisions":
            return self._parse_divisions(tokens, i)
        elif key == "expandable_segments":
            self.expandable_segments = _bool(tokens, i)
        elif key == "per_process_memory_fraction":
            value = float(_token(tokens, i))
            if not 0.0 <= value <= 1.0:
                raise ValueError("per_process_memory_fraction is invalid, set it in [0.0, 1.0]")
            self.per_process_memory_fraction = value
        elif key in _ACCEPTED_AND_IGNORED:
            return _skip_value(tokens, i)
        else:
            raise ValueError(f"Unrecognized key '{key}' in CUDA allocator config.")
        return i

    def _parse_divisions(self, tokens, i):
        """``N`` for every size, or ``[a:N,b:M,>:K]`` per power-of-two interval (a, b in MB)."""
        divisions = self.roundup_power2_divisions_list
        if _token(tokens, i) != "[":   # one value for all sizes (the older form)
            value = int(tokens[i])
            if not _is_power_of_2(value):
                raise ValueError("For roundups, the divisions has to be power of 2 ")
            divisions[:] = [value] * kRoundUpPowerOfTwoIntervals
            return i
        first, last_index = True, 0
        i += 1
        while _token(tokens, i) != "]":
            boundary, value = tokens[i], int(_token(tokens, i + 2))
            _expect(tokens, i + 1, ":")
            if value != 0 and not _is_power_of_2(value):
                raise ValueError("For roundups, the divisions has to be power of 2 or 0 to disable roundup ")
            if boundary == ">":   # every interval after the last one named
                divisions[last_index + 1:] = [value] * (kRoundUpPowerOfTwoIntervals - last_index - 1)
            else:
                if not _is_power_of_2(int(boundary)):
                    raise ValueError("For roundups, the intervals have to be power of 2 ")
                index = min(int(boundary).bit_length() - 1, kRoundUpPowerOfTwoIntervals - 1)
                if first:   # the first entry also covers every interval below it
                    divisions[:index] = [value] * index
                    first = False
                divisions[index] = value
                last_index = index
            i += 3
            if _token(tokens, i) == ",":
                i += 1
        return i


def _token(tokens, i):
    if i >= len(tokens):
        raise RuntimeError("Error parsing CachingAllocator settings: the string ends early")
    return tokens[i]


def _expect(tokens, i, char):
    if _token(tokens, i) != char:
        raise RuntimeError(f"Error parsing CachingAllocator settings, expected {char}")


def _megabytes(key, tokens, i):
    value = int(_token(tokens, i))
    if value < kLargeBuffer // MB:
        raise ValueError(f"CachingAllocator option {key} too small, must be >= {kLargeBuffer // MB}")
    return value


def _bool(tokens, i):
    token = _token(tokens, i)
    if token not in ("True", "False"):
        raise ValueError(f"Expected 'True' or 'False' at index {i} in ConfigTokenizer but got '{token}'")
    return token == "True"


def _skip_value(tokens, i):
    if _token(tokens, i) != "[":
        return i
    while _token(tokens, i) != "]":
        i += 1
    return i


_config = None


def get_config():
    """The process's settings, read from the environment the first time they are asked for."""
    global _config
    if _config is None:
        _config = AllocatorConfig()
        env = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", os.environ.get("PYTORCH_ALLOC_CONF"))
        if env is not None:
            _config.parse(env)
    return _config
