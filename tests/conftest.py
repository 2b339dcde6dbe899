"""Fixtures and settings every test shares; the shared helpers themselves are in ``helpers.py``."""
import gc
import os
import resource
import sys
import time
from pathlib import Path

# The garbage collector stays off from here to the end of collection (``pytest_collection`` below):
# importing torch and the package builds millions of long-lived objects, and each full collection
# on the way would walk them all again.
gc.disable()

import matplotlib  # noqa: E402

matplotlib.use("Agg")   # no display in tests: before any test module imports pyplot

import hypothesis  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

# First of the package: importing internals settles Numba's environment (the CUDA simulator, the
# kernel cache) before anything else imports numba, as torch's own test utilities do.
import internals  # noqa: E402, F401

# Each test subfolder on the path, as pytest puts a test file's own folder there: a test that reads
# another test file's cases (``from test_ops_math import GRAD_CASES``) finds it when run alone.
for _folder in sorted(p for p in Path(__file__).parent.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# torch's test utilities load a hypothesis profile of their own when first imported (10 random
# examples, or 50 derandomized when $CI is set: ``common_utils.py``), and the test modules import
# them (helpers.py, for the OpInfo database). Imported here first, so the profile below is the one
# every test runs under.
import torch.testing._internal.common_utils  # noqa: E402, F401

# Derandomized: CI and a developer see the same examples. No deadline: the first call of a
# kernel compiles it (or loads it from Numba's cache), which takes far longer than a run.
# ``HYPOTHESIS_PROFILE=thorough`` draws 600 examples a property, still derandomized, for a change
# to a strategy or to the kernels the properties reach (CONTRIBUTING.md, "Test time").
hypothesis.settings.register_profile("course", derandomize=True, deadline=None, max_examples=25,
                                     database=None, suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.register_profile("thorough", hypothesis.settings.get_profile("course"), max_examples=600)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))


@pytest.fixture(autouse=True)
def _seeded_generators():
    """Both default generators seeded before every test, as torch's own TestCase.setUp seeds them
    (``torch/testing/_internal/common_utils.py``): a module's random weights then hang on the test
    alone, never on which tests a pytest-xdist worker happened to run before it."""
    internals.manual_seed(0)
    import torch
    # torch's CPU generator, seeded directly: all that ``torch.manual_seed`` seeds in a build without
    # CUDA, which first queues a lazy seed for each absent device (CUDA, XPU, MTIA), each with a
    # formatted stack of its caller: half a millisecond per test under pytest
    torch.default_generator.manual_seed(0)


@pytest.fixture
def close_figures():
    """Close every figure a picture test drew (``pytestmark = pytest.mark.usefixtures(...)``)."""
    yield
    plt.close("all")


def _shared_memory_handles():
    """What a leak of shared memory would leave: names in /dev/shm, and this process's open
    descriptors of segments (named, or unlinked as torch's and ours are at once)."""
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:         # the descriptor listdir itself used, closed by now
            continue
        if target.startswith("/dev/shm/"):
            fds.append(target)
    return sorted(os.listdir("/dev/shm")), sorted(fds)


@pytest.fixture
def no_shared_memory_leak():
    """After the test, once its tensors are collected, no shared-memory segment or descriptor of
    one is left that was not there before."""
    before = _shared_memory_handles()
    yield
    if _shared_memory_handles() != before:     # a collection takes a second: only when needed
        gc.collect()
    assert _shared_memory_handles() == before


# --------------------------------------------------------------------------- --compile-report N
# Most of a cold run is Numba compiling kernels (README.md, "While you edit"). ``--compile-report N``
# says where: every top-level compilation (a kernel's callees compile inside its event, as
# ``internals._compile_notice`` counts them) is timed in CPU seconds, so the figures hold on a busy
# machine, and charged to the test phase it ran in. The report, after the run: the total, then the
# N tests and the N kernels that compiled longest. Under pytest-xdist each worker times its own
# compilations and sends them with its test reports; the controller adds them up.
def pytest_addoption(parser):
    parser.addoption("--compile-report", type=int, default=0, metavar="N",
                     help="list the N tests and N kernels whose Numba compilations took the most CPU time")
    parser.addoption("--compile-log", metavar="PATH",
                     help="with --compile-report: write every compiled signature and its CPU seconds to PATH (JSON)")


class _CompileClock:
    """A ``numba:compile`` listener: (kernel, CPU seconds) of each top-level compilation since the
    last test report."""

    def __init__(self):
        self.depth, self.started, self.done = 0, 0.0, []

    def on_start(self, event):
        self.depth += 1
        if self.depth == 1:
            self.started = time.process_time()

    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            dispatcher = event.data["dispatcher"]
            fn = getattr(dispatcher, "py_func", None)
            name = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else repr(dispatcher)
            self.done.append([name.replace(".<locals>", ""), time.process_time() - self.started,
                              _signature(fn, event.data.get("args")), _cached(dispatcher)])


def _signature(fn, args):
    """What tells one compilation of a kernel from another: the values a loop built by a factory
    closes over (its op number) and the argument types. The same text in two xdist workers means
    the second compiled what the first had compiled (or was compiling) too."""
    cells = tuple(cell.cell_contents for cell in getattr(fn, "__closure__", None) or ())
    return repr((cells, tuple(args or ())))


def _cached(dispatcher):
    """Whether Numba writes this kernel to its on-disk cache: one that it does not is compiled
    again by every worker and every run, however warm the cache."""
    from numba.core.caching import NullCache
    return not isinstance(getattr(dispatcher, "_cache", None), NullCache)


_COMPILE_CLOCK = pytest.StashKey()


def pytest_configure(config):
    # `make test` runs `-m "not slow"`, `make test-slow` (and CI, after it) `-m slow`; a plain pytest
    # command runs both.
    config.addinivalue_line("markers", "slow: left out of `make test` to keep it within 15 minutes: compiles "
                            "kernels again in a fresh process or cache, runs every CUDA kernel on the simulator "
                            "or to PTX, runs or trains a whole model, or gradchecks every mode of an operator")
    if config.getoption("compile_report"):
        from numba.core import event  # numba is loaded by now: internals, imported above, settled its environment

        clock = config.stash[_COMPILE_CLOCK] = _CompileClock()
        listener = type("Listener", (event.Listener,), {"on_start": lambda self, e: clock.on_start(e),
                                                         "on_end": lambda self, e: clock.on_end(e)})
        event.register("numba:compile", listener())



@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """What the imports of this file built (torch, the package, torch's test utilities) and what
    collection adds (the test modules, torch's OpInfo database, some thirty thousand items) lives
    to the end of the run. The garbage collector, off since this file was imported, stays off until
    collection ends; then one collection, and all that is left is moved out of the collector's
    walks (``gc.freeze``). A full collection otherwise walks those millions of objects again:
    fourteen of them while collecting, a fifth of its CPU time, and more in every test that calls
    ``gc.collect()``. None of the garbage of collection is kept for good: it is collected first."""
    gc.disable()            # off since this file was imported, unless a plugin turned it back on
    try:
        yield
    finally:
        gc.enable()
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    clock = item.config.stash.get(_COMPILE_CLOCK, None)
    if clock is not None and clock.done:
        outcome.get_result().user_properties.append(("numba_compile", clock.done))
        clock.done = []


def pytest_sessionfinish(session):
    """A pytest-xdist worker sends its CPU seconds (user and system, collection included) home."""
    if session.config.getoption("compile_report") and hasattr(session.config, "workeroutput"):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        session.config.workeroutput["cpu_seconds"] = usage.ru_utime + usage.ru_stime


_WORKER_CPU = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the controller: each worker's CPU seconds, as it went down (a hook of pytest-xdist's)."""
    if "cpu_seconds" in getattr(node, "workeroutput", {}):
        _WORKER_CPU[node.gateway.id] = node.workeroutput["cpu_seconds"]


def pytest_terminal_summary(terminalreporter, config):
    shown = config.getoption("compile_report")
    if not shown:
        return
    tests, kernels, signatures, uncached = {}, {}, {}, [0, 0.0]
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, compiled in getattr(report, "user_properties", ()):
                if key != "numba_compile":
                    continue
                for name, seconds, signature, cached in compiled:
                    tests[report.nodeid] = tests.get(report.nodeid, 0.0) + seconds
                    count, total = kernels.get(name, (0, 0.0))
                    kernels[name] = (count + 1, total + seconds)
                    signatures.setdefault((name, signature), []).append(seconds)
                    if not cached:
                        uncached[0], uncached[1] = uncached[0] + 1, uncached[1] + seconds
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", f"Numba compiled {sum(c for c, _ in kernels.values())} kernels in "
                                    f"{sum(tests.values()):.1f} CPU s")
    if config.getoption("compile_log"):
        import json
        with open(config.getoption("compile_log"), "w") as f:
            json.dump([[name, signature, times] for (name, signature), times in signatures.items()], f, indent=0)
    # A signature compiled more than once in one run was compiled by two xdist workers before
    # either found the other's in the on-disk cache (or by a kernel Numba does not cache).
    again = [times[1:] for times in signatures.values() if len(times) > 1]
    if _WORKER_CPU:
        write("CPU s by worker: " + ", ".join(f"{w} {cpu:.1f}" for w, cpu in sorted(_WORKER_CPU.items())))
    write(f"{len(signatures)} distinct signatures; {sum(map(len, again))} compiled again in another worker, "
          f"{sum(map(sum, again)):.1f} CPU s; {uncached[0]} compilations of kernels Numba does not cache, "
          f"{uncached[1]:.1f} CPU s")
    for nodeid, seconds in sorted(tests.items(), key=lambda kv: -kv[1])[:shown]:
        write(f"{seconds:8.2f} s  {nodeid}")
    terminalreporter.write_sep("-", "by kernel: CPU seconds, compilations (one per signature)")
    for name, (count, seconds) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:shown]:
        write(f"{seconds:8.2f} s  {count:4d}  {name}")
