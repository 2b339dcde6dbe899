"""DataLoader with worker processes beside torch's: the same batches and the same random
augmentations from the same seed, worker seeding and ``get_worker_info``, persistent workers,
prefetching, errors from a worker, a worker killed, a timeout. Tiny datasets, two workers at
most, every wait bounded; no test leaves shared memory behind."""
import contextlib
import os
import queue
import random
import signal
import time
import types
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud
from helpers import EveryKernel

import internals
import internals.utils.data as iud
from internals.exercises import check_in_order as ex_check
from internals.exercises.processes import reference_in_order
from internals.testing import assert_within_ulps

pytestmark = pytest.mark.usefixtures("no_shared_memory_leak")

LIBS = {"internals": (internals, iud), "torch": (torch, tud)}


def both(program):
    return program(*LIBS["internals"]), program(*LIBS["torch"])


def plain(value):
    """A batch as Python values, for comparing across libraries."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Augmented:
    """Each sample drawn from the three global streams a worker seeds: the library's default
    generator (a noisy copy of the index), Python's ``random`` and NumPy's."""

    def __init__(self, lib, n=10):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        noise = self.lib.rand(3) * 0.5 + i
        return noise, random.random(), float(np.random.rand())


class WhoAmI:
    """Each sample names the worker that read it, as ``get_worker_info`` tells it."""

    def __init__(self, data_module):
        self.data_module = data_module

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = self.data_module.get_worker_info()
        return i, info.id, info.num_workers, info.seed


def epochs(lib, data, dataset, n_epochs=1, seed=0, **options):
    lib.manual_seed(seed)
    loader = data.DataLoader(dataset, **options)
    batches = [plain(b) for _ in range(n_epochs) for b in loader]
    return batches, lib.randint(0, 2**31, (2,)).tolist()     # the default stream after: same draws?


@pytest.mark.parametrize("seed,workers,batch_size", [(0, 2, 3), (5, 1, 4), (123, 2, 1)])
def test_same_batches_and_augmentations_as_torch(seed, workers, batch_size):
    ours, theirs = both(lambda lib, data: epochs(lib, data, Augmented(lib), 2, seed, batch_size=batch_size,
                                                 shuffle=True, num_workers=workers))
    assert ours == theirs


def test_persistent_workers_continue_their_streams():
    """Kept between epochs, the workers are not seeded again, and no second base seed is drawn."""
    ours, theirs = both(lambda lib, data: epochs(lib, data, Augmented(lib), 2, 3, batch_size=2, shuffle=True,
                                                 num_workers=2, persistent_workers=True))
    assert ours == theirs


def test_loader_generator_gives_the_base_seed():
    def program(lib, data):
        generator = lib.Generator().manual_seed(42)
        return epochs(lib, data, Augmented(lib, 4), 1, 0, batch_size=2, num_workers=2, generator=generator)
    ours, theirs = both(program)
    assert ours == theirs


def test_worker_info_and_init_fn():
    """``seed = base_seed + worker_id``, and tasks go to the workers in turn."""
    def program(lib, data):
        seen = epochs(lib, data, WhoAmI(data), 1, 9, batch_size=2, num_workers=2,
                      worker_init_fn=lambda worker_id: np.random.seed(worker_id))
        return seen, data.get_worker_info()
    ours, theirs = both(program)
    assert ours == theirs
    assert ours[1] is None


def shards(data, n=7):
    """An IterableDataset (of the library's own class) that splits itself among the workers."""
    class Shards(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            return iter(range(info.id, n, info.num_workers))
    return Shards()


def test_iterable_dataset_split_by_worker_info():
    """Each worker's copy ends on its own; the loader stops asking it and goes on with the other."""
    ours, theirs = both(lambda lib, data: epochs(lib, data, shards(data), 1, batch_size=2, num_workers=2))
    assert ours == theirs


class Slow:
    """Index 0 takes longest, so later batches arrive first and wait their turn."""

    def __init__(self, delay):
        self.delay = delay

    def __len__(self):
        return 6

    def __getitem__(self, i):
        time.sleep(self.delay if i == 0 else 0)
        return i


def test_batches_arrive_in_order_whatever_order_workers_finish():
    ours, theirs = both(lambda lib, data: epochs(lib, data, Slow(0.3), 1, batch_size=1, num_workers=2))
    assert ours == theirs


def test_prefetch_sends_tasks_ahead():
    """On starting, ``prefetch_factor`` tasks per worker are sent (fewer if the sampler runs out)."""
    def program(lib, data):
        sent = []
        for factor, n in ((1, 10), (3, 10), (2, 3)):
            it = iter(data.DataLoader(list(range(n)), num_workers=2, prefetch_factor=factor))
            sent.append((it._send_idx, len(it)))
            list(it)
        return sent
    ours, theirs = both(program)
    assert ours == theirs


def test_batches_from_workers_are_in_shared_memory():
    def program(lib, data):
        batch = next(iter(data.DataLoader(Augmented(lib, 4), batch_size=2, num_workers=1)))
        return batch[0].is_shared(), batch[0].is_pinned()
    ours, theirs = both(program)
    assert ours == theirs == (True, False)


def test_pin_memory_without_accelerator_warns_as_torch():
    def program(lib, data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = [plain(b) for b in data.DataLoader(list(range(4)), batch_size=2, num_workers=1,
                                                         pin_memory=True)]
        return batches, [str(w.message) for w in caught]
    ours, theirs = both(program)
    assert ours == theirs


# ---------------------------------------------------------------------- hostile
class Raises:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise self.error(i)
        return i


class RaisesValueError(Raises):
    error = ValueError


class RaisesKeyError(Raises):
    error = KeyError


def failure(data, dataset, error, **options):
    """The error an epoch raises, as text. The iterator is stopped at once: the traceback would
    keep it alive until a garbage collection, and a loader collected in a cycle (torch's too)
    loses its index queues' feeder threads before it can send its workers the stop signal, so
    they would then be waited for and terminated."""
    it = iter(data.DataLoader(dataset, **options))
    try:
        with pytest.raises(error) as caught:
            for _ in it:
                pass
        return str(caught.value)
    finally:
        it._shutdown_workers()


@pytest.mark.slow
@pytest.mark.parametrize("dataset", [RaisesValueError, RaisesKeyError])
def test_worker_error_reraised_with_its_traceback(dataset):
    """The same class, and torch's message: where it was caught, then the worker's traceback."""
    ours, theirs = both(lambda lib, data: failure(data, dataset(), dataset.error, batch_size=1, num_workers=2))
    first = f"Caught {dataset.error.__name__} in DataLoader worker process 0.\nOriginal Traceback (most recent call"
    for message in (ours, theirs):
        assert message.startswith(first)
        assert "raise self.error(i)" in message
    assert ours.splitlines()[-1] == theirs.splitlines()[-1]


def _raise_in_init(worker_id):
    raise RuntimeError(f"init of worker {worker_id} failed")


def test_worker_init_fn_error_comes_with_the_first_batch():
    def program(lib, data):
        message = failure(data, list(range(4)), RuntimeError, num_workers=1, worker_init_fn=_raise_in_init)
        return message.splitlines()[0], message.splitlines()[-1]
    ours, theirs = both(program)
    assert ours == theirs


class Sleeps:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(0.05 if i < 2 else 1)
        return i


def test_worker_killed_is_reported_not_waited_for():
    """SIGKILL to a worker: a RuntimeError naming its pid, not a wait for the loader's own
    timeout (the bound is loose: a busy machine takes a while to report a process dead). torch
    may instead raise the socket error of unpickling a batch the worker queued before it died,
    when the death is not seen yet; the package waits until it is (chapter 12 says so)."""
    def program(lib, data):
        it = iter(data.DataLoader(Sleeps(), num_workers=2))
        assert plain(next(it)) == [0]
        victim = it._workers[1].pid
        start = time.monotonic()
        try:
            with pytest.raises((RuntimeError, ConnectionError, EOFError)) as error:
                os.kill(victim, signal.SIGKILL)
                while True:
                    next(it)
            message = str(error.value).replace(str(victim), "PID")
            return type(error.value), message, time.monotonic() - start < 20
        finally:
            # torch's SIGCHLD handler can fire again while the other worker exits at shutdown and
            # re-raise the death already reported above: the report is what this test checks
            with contextlib.suppress(RuntimeError):
                it._shutdown_workers()
    ours, theirs = both(program)
    accepted = ("DataLoader worker (pid(s) PID) exited unexpectedly",
                "DataLoader worker (pid PID) is killed by signal: Killed. ")
    assert ours[0] is RuntimeError and ours[1] in accepted
    assert theirs[1] in accepted if theirs[0] is RuntimeError else theirs[0] in (ConnectionResetError, EOFError)
    assert ours[2] and theirs[2]


@pytest.mark.parametrize("exitcode, cause", [
    (-signal.SIGKILL, "DataLoader worker (pid 7) is killed by signal: Killed. "),
    (3, "DataLoader worker (pid 7) exited unexpectedly with exit code 3. Details are lost due to "
        "multiprocessing. Rerunning with num_workers=0 may give better error trace."),
    (0, "reset")])
def test_a_reset_socket_reports_the_death_as_the_cause(exitcode, cause):
    """The killed worker's socket can reset the wait before SIGCHLD is handled (a busy machine
    makes it likely); the cause is then the handler's error, read from the reaped exit code, as
    torch reports it when its handler runs first. A clean exit leaves the reset as the cause."""
    from internals.utils.data.dataloader import _MultiProcessingDataLoaderIter as Iter
    worker = types.SimpleNamespace(pid=7, exitcode=exitcode)
    assert str(Iter._cause(ConnectionResetError("reset"), [worker])) == cause
    empty = queue.Empty()
    assert Iter._cause(empty, [worker]) is empty


def test_timeout_raises_torchs_error():
    ours, theirs = both(lambda lib, data: failure(data, Sleeps(), RuntimeError, num_workers=1, timeout=0.3))
    assert ours == theirs == "DataLoader timed out after 0.3 seconds"


@pytest.mark.parametrize("options", [dict(multiprocessing_context="fork"),
                                     dict(num_workers=1, multiprocessing_context="nope"),
                                     dict(num_workers=1, multiprocessing_context=3)],
                         ids=["without_workers", "unknown_method", "not_a_context"])
def test_context_option_errors_match_torch(options):
    with pytest.raises((ValueError, TypeError)) as theirs:
        tud.DataLoader([1], **options)
    with pytest.raises((ValueError, TypeError)) as ours:
        iud.DataLoader([1], **options)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_set_num_threads_checks_as_torch():
    for value in (0, -2, 1.5, True):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(value)
        with pytest.raises(RuntimeError) as ours:
            internals.set_num_threads(value)
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------- the chapter's exercise
def in_order_at_the_end(results):
    """Right order, but holds every batch until all have arrived."""
    return [batch for _, batch in sorted(results, key=lambda pair: pair[0])]


def in_arrival_order(results):
    return (batch for _, batch in results)


def in_order_one_per_arrival(results):
    """Yields at most one batch per arrival, so a batch that waited comes out late."""
    early, turn = {}, 0
    for n, batch in results:
        early[n] = batch
        if turn in early:
            yield early.pop(turn)
            turn += 1
    while turn in early:
        yield early.pop(turn)
        turn += 1


def test_reorder_exercise_checker_accepts_the_solution_and_the_loaders_order():
    assert "in order and on time" in ex_check(reference_in_order)
    # the reference yields what the loader yields for the same arrivals
    arrivals = [(1, "b1"), (3, "b3"), (0, "b0"), (2, "b2")]
    assert list(reference_in_order(arrivals)) == ["b0", "b1", "b2", "b3"]


@pytest.mark.parametrize("wrong", [in_order_at_the_end, in_arrival_order, in_order_one_per_arrival])
def test_reorder_exercise_checker_rejects_wrong_answers(wrong):
    with pytest.raises(AssertionError, match="arrivals"):
        ex_check(wrong)


def test_more_workers_than_cpus_warns_as_torch():
    workers = len(os.sched_getaffinity(0)) + 1

    def program(lib, data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = [plain(b) for b in data.DataLoader(list(range(3)), num_workers=workers)]
        return batches, [str(w.message) for w in caught]
    ours, theirs = both(program)
    assert ours == theirs
    assert len(ours[1]) == 2          # when the loader is made, and when its workers start


# ---------------------------------------------------------------------- every kernel in a forked worker
@pytest.mark.slow
def test_forked_workers_run_every_kernel_after_the_parent_used_its_thread_pool():
    """The parent computes every sample itself first, which starts the thread pool; workers forked
    after that (and told ``set_num_threads(1)``, as torch tells them) must run every kernel on
    their own thread. Their samples equal the parent's to the bit, and torch's."""
    def program(lib, data):
        dataset = EveryKernel(lib)
        here = [plain(dataset[i]) for i in range(len(dataset))]
        loader = data.DataLoader(dataset, batch_size=None, num_workers=2, multiprocessing_context="fork",
                                 timeout=300)
        return here, [plain(sample) for sample in loader]
    (ours_here, ours), (theirs_here, theirs) = both(program)
    assert ours == ours_here
    assert theirs == theirs_here
    for mine, torchs in zip(ours, theirs, strict=True):
        for got, expected in zip(mine, torchs, strict=True):
            assert_within_ulps(got, expected, 8)


class CompiledSample:
    """Each sample runs a function compiled by ``internals.compile`` (a generated fused kernel);
    ``compiled=False`` runs the same function eagerly, for torch."""

    def __init__(self, lib, compiled=True):
        self.lib = lib
        fn = lambda x: ((x * 2 + 1).relu() * x).sum(-1)     # noqa: E731
        self.fn = lib.compile(fn) if compiled else fn

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.fn(self.lib.arange(float(i), 60000.0 + i, dtype=self.lib.float64).reshape(300, 200))


def test_forked_workers_run_compiled_kernels_after_the_parent_used_its_thread_pool():
    """A generated kernel has a one-thread build too: the workers' samples equal the parent's
    (which ran the parallel build, starting the pool), and torch's eager values."""
    dataset = CompiledSample(internals)
    here = [plain(dataset[i]) for i in range(len(dataset))]
    loader = iud.DataLoader(dataset, batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=300)
    assert [plain(sample) for sample in loader] == here
    expected = CompiledSample(torch, compiled=False)
    for i, got in enumerate(here):
        assert_within_ulps(torch.tensor(got, dtype=torch.float64), expected[i], 4)
