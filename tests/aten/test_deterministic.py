"""Deterministic algorithms (``use_deterministic_algorithms`` and its kin), against torch: the
switches, their errors, and the memory ``empty`` hands out filled with NaN or the largest integer."""
import threading
import warnings

import pytest
import torch

import internals

LIBS = (internals, torch)


@pytest.fixture(autouse=True)
def switched_off_after():
    yield
    for lib in LIBS:
        lib.use_deterministic_algorithms(False)
        lib.utils.deterministic.fill_uninitialized_memory = True


def outcome(program, lib):
    try:
        return program(lib)
    except Exception as e:      # the error is part of what is compared
        return type(e), str(e)


def switches(lib):
    seen = [(lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
             lib.get_deterministic_debug_mode())]
    lib.use_deterministic_algorithms(True, warn_only=True)
    seen.append((lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                 lib.get_deterministic_debug_mode()))
    other = []          # one setting for the process, as torch's global context
    thread = threading.Thread(target=lambda: other.append(lib.are_deterministic_algorithms_enabled()))
    thread.start()
    thread.join()
    seen.append(other)
    for mode in ("error", "default", 1, 2, 0):
        lib.set_deterministic_debug_mode(mode)
        seen.append((mode, lib.get_deterministic_debug_mode(), lib.is_deterministic_algorithms_warn_only_enabled()))
    return seen


def test_switches_match_torch():
    assert outcome(switches, internals) == outcome(switches, torch)


@pytest.mark.parametrize("call", [
    lambda lib: lib.use_deterministic_algorithms(1),
    lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
    lambda lib: lib.set_deterministic_debug_mode("strict"),
    lambda lib: lib.set_deterministic_debug_mode(3),
    lambda lib: lib.set_deterministic_debug_mode(1.0),
    lambda lib: setattr(lib.utils.deterministic, "fill_uninitialized_memory", 1),
], ids=["mode_int", "warn_only_int", "debug_name", "debug_level", "debug_float", "fill_int"])
def test_bad_arguments_raise_as_torch(call):
    ours, theirs = outcome(call, internals), outcome(call, torch)
    assert ours == theirs and isinstance(ours[0], type)
    assert not internals.are_deterministic_algorithms_enabled()


DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "int8", "uint8", "bool"]


def uninitialized(lib, dtype):
    """What each allocating operator hands out, and what a growing ``resize_`` adds to a storage:
    only the elements past the storage's old end are filled, the view's own old ones kept."""
    lib.use_deterministic_algorithms(True)
    d = getattr(lib, dtype)
    base = lib.ones(2, dtype=d)
    within = lib.ones(6, dtype=d)[:2].resize_(4)         # the storage holds 6 already: nothing new
    grown = lib.ones(2, dtype=d).resize_(5)
    past_view = lib.ones(6, dtype=d)[2:4].resize_(6)     # grows the storage from 6 to 8 elements
    restrided = lib.ones(2, 2, dtype=d).t().resize_(3, 3)
    made = (lib.empty(2, 3, dtype=d), lib.empty_strided((2, 2), (1, 2), dtype=d), lib.empty_like(base),
            base.new_empty(3), lib.empty(0, dtype=d), within, grown, past_view, restrided)
    return [(str(t.tolist()), t.dtype is d) for t in made]


@pytest.mark.parametrize("dtype", DTYPES)
def test_new_memory_is_filled_as_torch_fills_it(dtype):
    assert outcome(lambda lib: uninitialized(lib, dtype), internals) == \
        outcome(lambda lib: uninitialized(lib, dtype), torch)


def test_filling_follows_its_own_switch():
    def program(lib):
        lib.use_deterministic_algorithms(True)
        lib.utils.deterministic.fill_uninitialized_memory = False
        off = lib.utils.deterministic.fill_uninitialized_memory
        lib.empty(3).fill_(1.0)         # allocation still works
        lib.utils.deterministic.fill_uninitialized_memory = True
        return off, str(lib.empty(3).tolist())
    assert outcome(program, internals) == outcome(program, torch) == (False, "[nan, nan, nan]")


def deterministic_on_cpu(lib):
    """Operators torch's CPU kernels run deterministically (duplicate indices included): no error."""
    lib.use_deterministic_algorithms(True)
    idx, src = lib.tensor([0, 2, 2]), lib.tensor([1.0, 2.0, 3.0])
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[idx].sum().backward()
    return [t.tolist() for t in (
        lib.zeros(4).index_add_(0, idx, src), lib.zeros(4).scatter_add_(0, idx, src),
        lib.zeros(4).index_put_((idx,), src, accumulate=True), lib.zeros(4).index_copy_(0, idx, src),
        lib.zeros(4).scatter_reduce(0, idx, src, "mean"), lib.bincount(idx), x.grad)]


def test_operators_deterministic_on_cpu_run_as_in_torch():
    assert outcome(deterministic_on_cpu, internals) == outcome(deterministic_on_cpu, torch)


def unpooling(lib, warn_only):
    """max_unpool has only a nondeterministic kernel in torch's eyes (on the CPU too): an error, or a
    warning and the result."""
    x = lib.tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 7.0], [0.5, 6.0, 1.5, 9.0], [2.5, 3.5, 4.5, 5.5]]]])
    F = lib.nn.functional
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    out1, idx1 = F.max_pool1d(x[0], 2, return_indices=True)
    lib.use_deterministic_algorithms(True, warn_only=warn_only)
    calls = (lambda: F.max_unpool2d(out, idx, 2), lambda: F.max_unpool1d(out1, idx1, 2),
             lambda: F.max_unpool3d(out[None], idx[None], (1, 2, 2)))
    seen = []
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(lambda _, call=call: call().flatten().tolist(), lib)
        seen.append((result, [str(w.message).split(" (Triggered")[0] for w in caught]))
    return seen


@pytest.mark.parametrize("warn_only", [False, True])
def test_max_unpool_alerts_as_torch(warn_only):
    assert unpooling(internals, warn_only) == unpooling(torch, warn_only)
