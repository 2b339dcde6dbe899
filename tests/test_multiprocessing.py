"""Tensors across processes (``internals.multiprocessing``) beside ``torch.multiprocessing``:
what a tensor becomes in a pickle, that views stay views and writes are seen on the other side,
and the lifetimes of the shared segments. Every program runs once per library, in processes
forked from this one, each wait bounded; no test leaves a segment or a descriptor behind."""
import io
import multiprocessing
import os
import pickle
import pickletools
import signal
import subprocess
import sys
import threading
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
import torch.multiprocessing

import internals
import internals.multiprocessing
from internals.c10 import map_allocator

pytestmark = pytest.mark.usefixtures("no_shared_memory_leak")

LIBS = {"internals": (internals, internals.multiprocessing), "torch": (torch, torch.multiprocessing)}
WAIT = 10       # seconds: far more than any step takes, far less than a hang


def both(program):
    """``program(lib, mp)`` for each library: the two results."""
    return program(*LIBS["internals"]), program(*LIBS["torch"])


def globals_named(payload):
    """The functions and classes a pickle calls or builds, in order, module left out (internals'
    and torch's differ), and so are the dtype and size types, which each library spells its own way."""
    names, strings = [], []
    for opcode, arg, _ in pickletools.genops(payload):
        if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif opcode.name == "STACK_GLOBAL":
            names.append(strings[-1])
        elif opcode.name == "GLOBAL":
            names.append(arg.split(" ")[1])
    return [n for n in names if n.startswith("rebuild") or n in ("Tensor", "UntypedStorage", "DupFd")]


def forking_dumps(obj):
    buffer = io.BytesIO()
    ForkingPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


# ---------------------------------------------------------------------- share_memory_ in place
def test_share_memory_moves_the_storage_in_place():
    """The tensor, its views and its storage report shared; the values are kept; no name is left
    in /dev/shm (the segment is unlinked as soon as it is made)."""
    def program(lib, mp):
        base = lib.arange(12, dtype=lib.float32)
        view = base[2:].view(2, 5)
        before = (base.is_shared(), base.untyped_storage().is_shared())
        names = os.listdir("/dev/shm")
        assert base.share_memory_() is base
        return before, base.is_shared(), view.is_shared(), view.tolist(), os.listdir("/dev/shm") == names
    ours, theirs = both(program)
    assert ours == theirs
    assert ours[1:3] == (True, True)


def test_share_memory_of_an_empty_tensor():
    ours, theirs = both(lambda lib, mp: lib.empty(0).share_memory_().is_shared())
    assert ours == theirs


# ---------------------------------------------------------------------- what crosses the pipe
def test_reduction_has_torch_shape_and_carries_no_data():
    """Pickled with ForkingPickler, a view becomes the same calls as torch's (rebuild_tensor,
    rebuild_typed_storage, rebuild_storage_fd with a DupFd), the same metadata, and none of the
    tensor's bytes: a 64 KiB tensor pickles to a few hundred bytes. Unpickled in the same process,
    it is a view of the very same storage."""
    def program(lib, mp):
        base = lib.full((128, 128), 7.25, dtype=lib.float32)
        view = base[3:, 5:].t()
        payload = forking_dumps(view)
        back = pickle.loads(payload)        # also takes the descriptor back from the sharer
        same = back.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        return (globals_named(payload), base.numpy().tobytes()[:64] in payload, len(payload) < 1024,
                back.shape, back.stride(), back.storage_offset(), same)
    ours, theirs = both(program)
    assert ours[0] == theirs[0]
    assert ours[0] == ["rebuild_tensor", "Tensor", "rebuild_typed_storage", "rebuild_storage_fd", "UntypedStorage",
                       "DupFd"]
    assert ours[1:] == theirs[1:]
    assert ours[1:3] == (False, True)


def test_empty_storage_travels_as_a_new_empty_one():
    def program(lib, mp):
        payload = forking_dumps(lib.empty(0))
        return globals_named(payload), pickle.loads(payload).shape
    ours, theirs = both(program)
    assert ours == theirs
    assert "rebuild_storage_empty" in ours[0]


def test_plain_pickle_still_copies_bytes():
    """Only ForkingPickler (multiprocessing) shares: ``pickle.dumps`` writes the data, as torch's."""
    def program(lib, mp):
        t = lib.full((256,), 3.5)
        return t.numpy().tobytes()[:64] in pickle.dumps(t), t.is_shared()
    ours, theirs = both(program)
    assert ours == theirs == (True, False)


def test_non_leaf_that_requires_grad_is_refused():
    def program(lib, mp):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            forking_dumps(x * 2)
        leaf = pickle.loads(forking_dumps(x))
        param = pickle.loads(forking_dumps(lib.nn.Parameter(lib.ones(2))))
        return str(error.value), leaf.requires_grad, leaf.is_leaf, type(param).__name__, param.requires_grad
    ours, theirs = both(program)
    assert ours == theirs


# ---------------------------------------------------------------------- across processes
def _child_writes(mp_queue, done):
    """Receive (tensor, view) in one message and a second view in another; report whether all
    three map one segment; write through the views."""
    t, v = mp_queue.get(timeout=WAIT)
    w = mp_queue.get(timeout=WAIT)
    same = len({t.untyped_storage().data_ptr(), v.untyped_storage().data_ptr(), w.untyped_storage().data_ptr()})
    v.fill_(-1)
    w.add_(100)
    done.put((same, t.tolist(), v.stride(), v.storage_offset()))


def test_child_sees_views_as_views_and_parent_sees_its_writes():
    def program(lib, mp):
        t = lib.arange(12, dtype=lib.float64).view(3, 4)
        q, done = mp.Queue(), mp.Queue()
        p = mp.Process(target=_child_writes, args=(q, done))
        p.start()
        q.put((t, t[:, 1]))
        q.put(t[2])
        result = done.get(timeout=WAIT)
        p.join(WAIT)
        return result, t.tolist(), p.exitcode
    ours, theirs = both(program)
    assert ours == theirs
    assert ours[0][0] == 1 and ours[2] == 0


def _child_over_pipe(conn):
    t = conn.recv()
    t.mul_(2)
    conn.send("done")
    conn.close()


def test_pipe_carries_a_handle_too():
    def program(lib, mp):
        parent, child = mp.Pipe()
        t = lib.ones(5, dtype=lib.int32)
        p = mp.Process(target=_child_over_pipe, args=(child,))
        p.start()
        parent.send(t)
        assert parent.poll(WAIT)
        reply = parent.recv()
        p.join(WAIT)
        parent.close()
        child.close()
        return reply, t.tolist(), t.is_shared()
    ours, theirs = both(program)
    assert ours == theirs == ("done", [2] * 5, True)


def _sender(lib_name, q, ack):
    """Send a tensor, then wait (or not) for the receiver before exiting."""
    lib = LIBS[lib_name][0]
    q.put(lib.arange(4.0) + 1)
    if ack is not None:
        ack.get(timeout=WAIT)
    q.close()
    q.join_thread()


def test_data_outlives_a_sender_that_exits_after_delivery():
    """Once received, the segment is mapped here: the sender's exit takes nothing away."""
    def program(lib, mp):
        name = "internals" if lib is internals else "torch"
        q, ack = mp.Queue(), mp.Queue()
        p = mp.Process(target=_sender, args=(name, q, ack))
        p.start()
        t = q.get(timeout=WAIT)
        ack.put(True)
        p.join(WAIT)
        t.add_(1)
        return p.exitcode, t.tolist()
    ours, theirs = both(program)
    assert ours == theirs == (0, [2.0, 3.0, 4.0, 5.0])


def test_a_sender_that_dies_before_delivery_cannot_hand_over_its_descriptor():
    """The descriptor is handed over by the sender when the receiver unpickles: if the sender is
    gone by then, unpickling fails (with the same error class as torch's), and nothing hangs."""
    def program(lib, mp):
        name = "internals" if lib is internals else "torch"
        q = mp.Queue()
        p = mp.Process(target=_sender, args=(name, q, None))
        p.start()
        p.join(WAIT)
        with pytest.raises(Exception) as error:
            q.get(timeout=WAIT)
        return p.exitcode, type(error.value)
    ours, theirs = both(program)
    assert ours == theirs
    assert issubclass(ours[1], OSError)


def _share_until_exit(count_queue):
    """A thread that shares storages without pause while the process's main thread leaves as a
    DataLoader worker does: ``close_naming``, then ``os._exit`` without joining the thread."""
    shared = [0]

    def share():
        while True:
            map_allocator.new_shared_fd(8)
            shared[0] += 1
    threading.Thread(target=share, daemon=True).start()
    while shared[0] < 200:
        pass
    count_queue.put(shared[0])
    count_queue.close()
    count_queue.join_thread()
    map_allocator.close_naming()
    os._exit(0)


def test_a_process_that_ends_while_a_thread_shares_leaves_no_name():
    """Naming a segment and unlinking it are two calls here (one C++ call in torch): a process
    that ends between them would leave its name in /dev/shm. Ten processes end mid-share; none
    may leave a name (without the lock, most runs left one)."""
    ctx = multiprocessing.get_context("fork")
    for _ in range(10):
        q = ctx.Queue()
        p = ctx.Process(target=_share_until_exit, args=(q,))
        p.start()
        assert q.get(timeout=WAIT) >= 200
        p.join(WAIT)
        assert p.exitcode == 0
        assert [n for n in os.listdir("/dev/shm") if n.startswith(f"internals_{p.pid}_")] == []


# ---------------------------------------------------------------------- resizing
def _receiver_sizes(q, done):
    t = q.get(timeout=WAIT)
    done.put((t.untyped_storage().nbytes(), t.tolist()))


def test_tensor_sent_after_its_storage_grew_arrives_grown():
    """Resized before it is shared, the storage travels at its new size; its tensor as it is."""
    def program(lib, mp):
        t = lib.arange(3, dtype=lib.float32)
        t.resize_(5)
        t[3:] = 9
        q, done = mp.Queue(), mp.Queue()
        p = mp.Process(target=_receiver_sizes, args=(q, done))
        p.start()
        q.put(t)
        result = done.get(timeout=WAIT)
        p.join(WAIT)
        return result
    ours, theirs = both(program)
    assert ours == theirs == (20, [0.0, 1.0, 2.0, 9.0, 9.0])


def test_shared_storage_refuses_to_resize():
    """Other processes map the segment at its size, so a shared storage does not resize: ours
    raises. torch 2.13 keeps such a storage marked resizable and then dereferences a null
    allocator: the process dies (checked in a separate process)."""
    t = internals.arange(4.0).share_memory_()
    for resize in (lambda: t.resize_(100), lambda: t.untyped_storage().resize_(64)):
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            resize()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    program = "import torch; t = torch.arange(4.0).share_memory_(); t.resize_(100); print(t.is_shared())"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=60, text=True)
    assert run.returncode == -signal.SIGSEGV or "RuntimeError" in run.stderr


# ---------------------------------------------------------------------- the module's surface
def test_sharing_strategy_is_torchs_default():
    assert internals.multiprocessing.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert internals.multiprocessing.get_sharing_strategy() in torch.multiprocessing.get_all_sharing_strategies()
    with pytest.raises(AssertionError):
        torch.multiprocessing.set_sharing_strategy("bytes")
    with pytest.raises(AssertionError):
        internals.multiprocessing.set_sharing_strategy("bytes")
    with pytest.raises(NotImplementedError):
        internals.multiprocessing.set_sharing_strategy("file_system")


def test_start_method_and_namespace_are_pythons():
    for name in ("Queue", "Pipe", "Process", "get_context", "SimpleQueue", "Event"):
        assert hasattr(internals.multiprocessing, name) and hasattr(torch.multiprocessing, name)
    assert internals.multiprocessing.get_start_method() == torch.multiprocessing.get_start_method()
