"""Fixtures and settings every test shares; the shared helpers themselves are in ``helpers.py``."""
import gc
import os
import sys
from pathlib import Path

import matplotlib

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
    torch.manual_seed(0)


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
