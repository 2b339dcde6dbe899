"""Hostile input and threads: nothing crashes, nothing races, nothing is silently wrong.

Each test here was a crash, a race or a silent difference from torch 2.13 once. A case that used
to crash the interpreter (a kernel reading outside its buffer) runs in a subprocess, so that a
regression fails the test instead of killing the test run. Thread tests shorten the interpreter's
switch interval so that threads interleave inside the code under test, where races show.
"""
import copy
import os
import pickle
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from helpers import (
    assert_same,
    assert_same_error,
    in_threads,  # noqa: F401
)

import internals
from internals.cuda import caching_allocator as ca
from internals.cuda import memory
from internals.cuda._device_memory import DeviceMemory
from internals.cuda.allocator_config import AllocatorConfig

MiB, GiB = 1024**2, 1024**3


def run_program(source, **env):
    """Run ``source`` in a fresh interpreter with this package; its exit status and output.
    A setting given as None is left out of the child's environment. The first-compile notice is
    off: on a cold kernel cache it would be part of the output the tests parse."""
    env = {"INTERNALS_COMPILE_NOTICE": "0", **env}
    environment = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], env=environment,
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout + result.stderr




# ----------------------------------------------------------------------------- sparse indices
SPARSE_MISUSE = """
    import internals as T
    def build():
        i = T.tensor([[0, 1], [1, 0]])
        return i, T.sparse_coo_tensor(i, T.tensor([1., 2.]), (2, 2))
    ops = {"to_dense": lambda s: s.to_dense(), "coalesce": lambda s: s.coalesce()._values(),
           "add": lambda s: (s + s).to_dense(), "mm": lambda s: s @ T.ones(2, 3),
           "rmm": lambda s: T.ones(3, 2) @ s}
    for bad in (10**8, 5, 2, -1):
        for through in ("caller", "_indices"):
            for name, op in ops.items():
                i, s = build()
                (i if through == "caller" else s._indices())[0, 0] = bad
                try:
                    op(s)
                    print(bad, through, name, "no error")
                except RuntimeError as e:
                    print(bad, through, name, "RuntimeError", e)
"""


@pytest.mark.slow
def test_sparse_kernels_recheck_indices_written_after_construction():
    """The caller keeps the indices tensor it passed (torch does not copy it) and ``_indices()``
    hands it out again: an index written there later is refused where a kernel would follow it,
    never followed outside the dense buffer (a segfault) nor wrapped around (-1). One subprocess
    runs every case: a crash fails the test instead of killing the run."""
    code, out = run_program(SPARSE_MISUSE)
    assert code == 0, out
    lines = out.strip().splitlines()
    assert len(lines) == 4 * 2 * 5, out
    for line in lines:
        bad = int(line.split()[0])
        expected = (f"found negative index {bad} for dim [01]" if bad < 0 else
                    f"size is inconsistent with indices: for dim [01], size is 2 but found index {bad}")
        assert " RuntimeError " in line and re.search(expected + "$", line), line   # rmm flips the dims


def test_a_coalesced_tensor_whose_indices_were_reordered_is_refused_by_mm():
    """mm builds CSR row pointers from the rows of a coalesced tensor: unsorted rows would leave
    pointers unwritten, and the kernel would follow garbage."""
    s = internals.sparse_coo_tensor(internals.tensor([[0, 1], [1, 0]]), internals.tensor([1., 2.]), (2, 2)).coalesce()
    s._indices()[0, 0] = 1
    s._indices()[0, 1] = 0
    with pytest.raises(RuntimeError, match="unsorted or repeated"):
        s @ internals.ones(2, 3)


def test_rebinding_the_callers_indices_tensor_does_not_reach_the_sparse_tensor():
    i = internals.tensor([[0, 1], [1, 0]])
    s = internals.sparse_coo_tensor(i, internals.tensor([1., 2.]), (2, 2))
    i.data = internals.zeros(2, 100, dtype=internals.int64)
    ti = torch.tensor([[0, 1], [1, 0]])
    assert_same(s.to_dense(), torch.sparse_coo_tensor(ti, torch.tensor([1., 2.]), (2, 2)).to_dense())


# ----------------------------------------------------------------------------- the kernel cache
@pytest.mark.slow
def test_the_kernel_cache_is_keyed_by_numbas_code_generation_settings():
    """A loop compiled without bounds checks must not be served to ``NUMBA_BOUNDSCHECK=1``."""
    probe = "from internals import _cuda_env; print(_cuda_env._kernel_sources_hash())"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_BOUNDSCHECK"}
    plain = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True).stdout
    checked = subprocess.run([sys.executable, "-c", probe], env={**env, "NUMBA_BOUNDSCHECK": "1"},
                             capture_output=True, text=True).stdout
    assert plain and checked and plain != checked


@pytest.mark.slow
def test_bounds_checked_kernels_run_under_numba_boundscheck():
    # No NUMBA_CACHE_DIR: the package keys its own cache folder by NUMBA_BOUNDSCHECK (the test
    # above), so the child meets only bounds-checked loops, shared with test_fuzz.py's checked run
    # and compiled once per kernel sources rather than once per test run.
    code, out = run_program("""
        import numba, internals as T
        assert numba.config.BOUNDSCHECK == 1
        x = T.arange(12.).reshape(3, 4)
        print((x.t() + 1).sum().item(), x[:, 1::2].exp().shape)
    """, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=None)
    assert code == 0 and out.split()[0] == "78.0", out


# ----------------------------------------------------------------------------- threads and Numba's layers
CONCURRENT_OPS = """
    import sys, threading, numba, internals as T
    x = T.ones(200_000)          # above one grain: the parallel loops run
    results = []
    def work():
        for _ in range(5):
            results.append((x + 1).sum().item() + x.exp().amax().item())
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(numba.threading_layer(), len(results), set(results))
"""


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_ops_from_four_threads_never_abort_whatever_the_threading_layer(layer):
    """Numba's workqueue layer terminates the process when two threads launch parallel loops at
    once; the dispatcher then runs one operator at a time."""
    code, out = run_program(CONCURRENT_OPS, NUMBA_THREADING_LAYER=layer)
    assert code == 0, out
    name, count, values = out.split(maxsplit=2)
    assert (count, values.strip()) == ("20", "{400002.7182817459}") and (name == "workqueue") == (layer == "workqueue")


# ----------------------------------------------------------------------------- the caching allocator
def check_consistent(a):
    """Every segment's blocks are linked both ways and tile it; the pools hold exactly the free blocks."""
    for head in a.segments():
        block = head
        while block.next is not None:
            assert block.next.prev is block and block.next.ptr == block.ptr + block.size
            block = block.next
    cached = set(a.small_blocks.blocks) | set(a.large_blocks.blocks)
    assert not any(b.allocated for b in cached) and all(b.allocated for b in a.active_blocks)


def test_the_caching_allocator_survives_four_threads():
    a = ca.DeviceCachingAllocator(DeviceMemory(capacity=GiB), AllocatorConfig())
    sizes = [512, 4096, 700_000, 3 * MiB, 12 * MiB]

    def work(k):
        held = []
        for step in range(300):
            held.append(a.malloc(sizes[(step + k) % len(sizes)]))
            if step % 3 or len(held) > 20:      # at most 21 blocks a thread: well inside the 1 GiB device
                a.free(held.pop(0))
            if step % 50 == 0:
                a.empty_cache()
        for block in held:
            a.free(block)

    assert in_threads(work) == []
    check_consistent(a)
    assert a.stats.allocated_bytes["all"].current == 0 and a.stats.active["all"].current == 0
    a.empty_cache()
    assert a.stats.reserved_bytes["all"].current == 0 and a.segments() == []


@pytest.fixture
def fresh_cuda():
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=16 * GiB))
    yield native.device_allocator
    native.device_allocator = saved


def test_cuda_tensors_made_and_freed_on_four_threads(fresh_cuda):
    def work(k):
        held = []
        for n in range(150):
            held.append(internals.empty(((n * 37 + k) % 300 + 1) * 1024, device="cuda"))
            if n % 2:
                del held[0]

    assert in_threads(work) == []
    check_consistent(fresh_cuda)
    assert memory.memory_allocated() == 0 and memory.memory_stats()["active.all.current"] == 0
    memory.empty_cache()
    assert memory.memory_reserved() == 0


@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, internals.device("cuda")], ids=str)
def test_memory_functions_take_a_device_string(fresh_cuda, device):
    x = internals.empty(1000, device="cuda")
    assert memory.memory_allocated(device) == 4096 and memory.memory_reserved(device) == 2 * MiB
    assert memory.memory_stats(device)["allocated_bytes.all.current"] == 4096
    assert memory.mem_get_info(device)[1] == 16 * GiB
    del x


def test_memory_functions_refuse_a_cpu_device():
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        memory.memory_allocated("cpu")


# ----------------------------------------------------------------------------- gradient accumulation
def test_backward_from_four_threads_into_shared_leaves_loses_no_update():
    """Accumulating into ``.grad`` is a read of it and a write: two threads' backward passes into one
    leaf must not interleave there. The leaf is large enough for the parallel loop, whose threads
    run without the GIL; a lost update leaves an element short of 4 threads x 60 passes x 2."""
    w = internals.ones(100_000, requires_grad=True)

    def work(k):
        for _ in range(60):
            (w * 2).sum().backward()

    assert in_threads(work) == []
    assert (w.grad.min().item(), w.grad.max().item()) == (480.0, 480.0)


# ----------------------------------------------------------------------------- deepcopy and pickle
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_keep_views_of_one_storage_together(device, how):
    """A base and its view copied together stay a base and a view of one new storage, on the device.
    (torch's deepcopy does this; its pickle gives each tensor a storage of its own, because each
    ``storage()`` call makes a new wrapper that pickle's memo does not recognise. Here pickle keeps
    the sharing, as ``torch.save`` does.)"""
    def roundtrip(obj):
        return copy.deepcopy(obj) if how == "deepcopy" else pickle.loads(pickle.dumps(obj))

    x = internals.arange(12.).reshape(3, 4).to(device)
    tx = torch.arange(12.).reshape(3, 4)
    a, b = roundtrip([x, x[1:, ::2]])
    ta, tb = copy.deepcopy([tx, tx[1:, ::2]])
    assert a.device == b.device == x.device
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    a[2, 2] = -1.0
    ta[2, 2] = -1.0
    assert (b.stride(), b.storage_offset(), b.tolist()) == (tb.stride(), tb.storage_offset(), tb.tolist())
    assert x[2, 2].item() == 10.0


def test_deepcopy_of_a_cuda_tensor_copies_its_bytes_only(fresh_cuda):
    x = internals.ones(1000, device="cuda")
    before = memory.memory_allocated()
    y = copy.deepcopy(x)
    assert memory.memory_allocated() - before == 4096 and y.device.type == "cuda"
    assert len(pickle.dumps(x)) < 4000 + 1000      # the bytes and a little framing, not the allocator
    del y
    assert memory.memory_allocated() == before


def test_deepcopy_keeps_requires_grad_and_grad_pickle_keeps_requires_grad():
    w, tw = internals.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    (tw * 2).sum().backward()
    for ours, theirs in ((copy.deepcopy(w), copy.deepcopy(tw)), (pickle.loads(pickle.dumps(w)),
                                                                  pickle.loads(pickle.dumps(tw)))):
        assert (ours.requires_grad, ours.is_leaf, ours.grad is None) == (theirs.requires_grad, theirs.is_leaf,
                                                                          theirs.grad is None)
        if theirs.grad is not None:
            assert_same(ours.grad, theirs.grad)


def test_deepcopy_of_a_non_leaf_raises_as_torch():
    w, tw = internals.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    ours, theirs = assert_same_error(lambda: copy.deepcopy(w * 2), lambda: copy.deepcopy(tw * 2))
    assert str(theirs).startswith(str(ours))


def test_sparse_tensors_deepcopy_and_pickle():
    i, v = [[0, 1, 1], [2, 0, 2]], [3., 4., 5.]
    s, ts = internals.sparse_coo_tensor(internals.tensor(i), internals.tensor(v), (2, 3)), \
        torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (2, 3))
    for f in (copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))):
        assert_same(f(s).to_dense(), f(ts).to_dense())


# ----------------------------------------------------------------------------- refused as torch refuses
def _set_grad(T, grad):
    w = T.ones(2, requires_grad=True)
    w.grad = grad(T)


def _set_data(T):
    w = T.ones(2, requires_grad=True)
    w.data = T.ones(2, dtype=T.int64)


def _backward_through_hook(T, hook):
    x = T.ones(3, requires_grad=True)
    x.register_hook(hook)
    (x * 2).sum().backward()


def _inference_tensor(T):
    with T.inference_mode():
        return T.ones(2)


# Each case: a function of the module (internals or torch) that torch refuses; the message torch
# gives must start with ours (ours may stop before torch's advice).
REFUSED = {
    "tensor int8 300": lambda T: T.tensor([300], dtype=T.int8),
    "tensor int64 1e20": lambda T: T.tensor([1e20], dtype=T.int64),
    "tensor int64 nan": lambda T: T.tensor([float("nan")], dtype=T.int64),
    "tensor uint8 -1.5": lambda T: T.tensor([-1.5], dtype=T.uint8),
    "tensor int16 nested": lambda T: T.tensor([[1, 2], [3, 40000]], dtype=T.int16),
    "setitem int8 1000": lambda T: T.zeros(2, dtype=T.int8).__setitem__(0, 1000),
    "add alpha 1j": lambda T: T.add(T.ones(3), T.ones(3), alpha=1j),
    "add alpha True": lambda T: T.add(T.ones(3), T.ones(3), alpha=True),
    "sub alpha True": lambda T: T.ones(3).sub(T.ones(3), alpha=True),
    "device cuda:-1": lambda T: T.device("cuda:-1"),
    "arange nan": lambda T: T.arange(float("nan")),
    "arange inf": lambda T: T.arange(0, float("inf")),
    "squeeze (0, 0)": lambda T: T.ones(1, 2).squeeze((0, 0)),
    "empty_strided 2 sizes 1 stride": lambda T: T.empty_strided((2, 3), (1,)),
    "expand 2**32 x 2**32": lambda T: T.ones(1, 1).expand(2**32, 2**32),
    "from_numpy odd strides": lambda T: T.from_numpy(np.ndarray((2,), np.float32, np.zeros(12, np.uint8), 0, (6,))),
    "grad of another size": lambda T: _set_grad(T, lambda T: T.ones(3)),
    "grad of another dtype": lambda T: _set_grad(T, lambda T: T.ones(2, dtype=T.float64)),
    "grad an int tensor": lambda T: _set_grad(T, lambda T: T.ones(2, dtype=T.int64)),
    "grad an int": lambda T: _set_grad(T, lambda T: 5),
    "data int with requires_grad": _set_data,
    "hook changes dtype": lambda T: _backward_through_hook(T, lambda g: g.double()),
    "hook changes size": lambda T: _backward_through_hook(T, lambda g: g[:1]),
    "hook returns an int": lambda T: _backward_through_hook(T, lambda g: 5),
    "inference requires_grad_": lambda T: _inference_tensor(T).requires_grad_(),
    "inference _version": lambda T: _inference_tensor(T)._version,
    "cuda('cpu')": lambda T: T.ones(2).cuda("cpu"),
}


@pytest.mark.parametrize("case", REFUSED, ids=str)
def test_refused_as_torch_refuses(case):
    ours, theirs = assert_same_error(lambda: REFUSED[case](internals), lambda: REFUSED[case](torch))
    assert str(theirs).startswith(str(ours)) or case in ("cuda('cpu')", "expand 2**32 x 2**32", "hook changes dtype"), \
        (str(ours), str(theirs))


def test_hook_changing_the_dtype_names_both_types():
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was torch.FloatTensor "
                                           r"got torch.DoubleTensor\)"):
        _backward_through_hook(internals, lambda g: g.double())


@pytest.mark.parametrize("device", ["cuda:1", 5])
def test_there_is_one_cuda_device(device):
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        internals.ones(2, device=device)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        internals.ones(2).to(device)


# ----------------------------------------------------------------------------- computed as torch computes
ACCEPTED = {
    "mean float16": lambda T: T.full((100,), 1000., dtype=T.float16).mean(),
    "mean bfloat16": lambda T: T.tensor([43.75, 44.0, 43.5, 43.75, 44.25], dtype=T.bfloat16).mean(),
    "mean float16 dim": lambda T: T.full((3, 200), 500., dtype=T.float16).mean(1),
    "setitem uint8 -1 wraps": lambda T: _set(T.zeros(2, dtype=T.uint8), slice(None), -1),
    "device cpu:0": lambda T: T.ones(2, device="cpu:0") + 1,
    "dtype=float": lambda T: T.ones(2, dtype=float),
    "dtype=int": lambda T: T.zeros(2, dtype=int),
    "dtype=bool": lambda T: T.zeros(2, dtype=bool),
    "fill_ 0-dim tensor": lambda T: T.zeros(2).fill_(T.tensor(3.)),
    "movedim of a scalar": lambda T: T.tensor(1.).movedim(-1, -1),
    "read-only broadcast_to": lambda T: T.from_numpy(np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))) + 1,
    "read-only frombuffer": lambda T: T.from_numpy(np.frombuffer(b"\0\0\x80?" * 4, dtype=np.float32)).exp(),
    "read-only setflags": lambda T: T.from_numpy(_read_only(np.arange(6.).reshape(2, 3))).sum(0),
}


def _set(x, index, value):
    x[index] = value
    return x


def _read_only(array):
    array.setflags(write=False)
    return array


@pytest.mark.parametrize("case", ACCEPTED, ids=str)
def test_computed_as_torch_computes(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch warns that a read-only array is shared
        assert_same(ACCEPTED[case](internals), ACCEPTED[case](torch), exact_layout=False)


def test_cpu_allocation_failure_is_torchs_runtime_error():
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        internals.empty(2**50, dtype=internals.uint8)
