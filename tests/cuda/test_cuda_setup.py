"""How the package settles CUDA linking before Numba is imported (internals/_cuda_link.py,
internals/_cuda_env.py): the decision for each driver, toolkit and linker, without a GPU."""
import ctypes
import os

import pytest

from internals import _cuda_env
from internals._cuda_link import CORE_LINKER_SINCE, LinkPlan, link_plan, probe

COLAB_T4 = dict(driver=(12, 4), toolkit=(12, 5))  # googlecolab/colabtools#5081
OLD_NUMBA_CUDA = (0, 13)


@pytest.mark.parametrize("driver", [(12, 5), (12, 8), (13, 0)])
def test_a_driver_as_new_as_the_toolkit_needs_nothing(driver):
    assert link_plan(driver, (12, 5), (0, 21)) == LinkPlan()


def test_an_unknown_toolkit_is_left_to_numba():
    assert link_plan((12, 4), None, (0, 21)) == LinkPlan()


def test_nvjitlink_as_new_as_the_toolkit_links_by_itself():
    assert link_plan(**COLAB_T4, numba_cuda=(0, 21), nvjitlink=(12, 5)) == LinkPlan()
    assert link_plan(**COLAB_T4, numba_cuda=CORE_LINKER_SINCE, nvjitlink=(12, 9)) == LinkPlan()


@pytest.mark.parametrize("nvjitlink", [None, (12, 4)])  # absent, or older than the PTX (NVIDIA/numba-cuda#163)
def test_without_a_new_enough_linker_the_simulator_runs_and_one_message_says_what_to_install(nvjitlink):
    plan = link_plan(**COLAB_T4, numba_cuda=(0, 21), nvjitlink=nvjitlink)
    assert plan.env == {"NUMBA_ENABLE_CUDASIM": "1"}
    assert "CUDA 12.4" in plan.message and "CUDA 12.5" in plan.message
    assert 'pip install "nvidia-nvjitlink-cu12==12.5.*"' in plan.message and "restart" in plan.message
    assert "\n" not in plan.message and "Traceback" not in plan.message


def test_numba_cuda_before_the_cuda_core_linker_is_switched_to_pynvjitlink():
    plan = link_plan(**COLAB_T4, numba_cuda=OLD_NUMBA_CUDA, nvjitlink=(12, 5), pynvjitlink=True)
    assert plan == LinkPlan(env={"NUMBA_CUDA_ENABLE_PYNVJITLINK": "1"})
    plan = link_plan(**COLAB_T4, numba_cuda=OLD_NUMBA_CUDA, nvjitlink=(12, 5), pynvjitlink=False)
    assert plan.env == {"NUMBA_ENABLE_CUDASIM": "1"} and "pip install pynvjitlink-cu12" in plan.message


def test_no_linker_crosses_a_major_version():
    plan = link_plan((12, 4), (13, 0), (0, 21), nvjitlink=(13, 0))
    assert plan.env == {"NUMBA_ENABLE_CUDASIM": "1"} and 'numba-cuda[cu12]' in plan.message


class _FakeDriver:
    """libcuda's cuDriverGetVersion, reporting 12.4 as the int 12040."""

    def cuDriverGetVersion(self, out):
        ctypes.cast(out, ctypes.POINTER(ctypes.c_int)).contents.value = 12040
        return 0


def test_probe_reads_the_driver_version_and_the_installed_packages():
    found = probe(_FakeDriver())
    assert found["driver"] == (12, 4)
    assert found["numba_cuda"] >= CORE_LINKER_SINCE  # requirements.txt pins a release with the new linker
    assert found["toolkit"] is None or len(found["toolkit"]) == 2


def test_settling_applies_the_plan_before_numba_and_says_why(monkeypatch, capsys):
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")})
    monkeypatch.setattr(_cuda_env, "probe", lambda driver: dict(
        **COLAB_T4, numba_cuda=OLD_NUMBA_CUDA, nvjitlink=(12, 5), pynvjitlink=True))
    _cuda_env._settle_linking(_FakeDriver())
    assert os.environ["NUMBA_CUDA_ENABLE_PYNVJITLINK"] == "1"
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_cuda_env, "probe", lambda driver: dict(**COLAB_T4, numba_cuda=(0, 21)))
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"  # a setting the user made is kept
    _cuda_env._settle_linking(_FakeDriver())
    assert "cannot load the kernels" in capsys.readouterr().err and os.environ["NUMBA_ENABLE_CUDASIM"] == "0"
