"""torch.compile under a forced ``ATEN_CPU_CAPABILITY``, with chapter 11's vector-width setting.

Inductor picks the vector instructions of its C++ kernels in ``pick_vec_isa``
(``torch/_inductor/cpu_vec_isa.py``): from ``config.cpp.simdlen`` when set, else from
``ATEN_CPU_CAPABILITY`` (``default`` means none), else from the CPU. Its cache of compiled graphs
(``FxGraphHashDetails`` in ``torch/_inductor/codecache.py``) hashes the inductor settings but not
that variable. In torch 2.13, a graph compiled natively (``at::vec::Vectorized`` code) and then
compiled again with ``ATEN_CPU_CAPABILITY=default`` comes back from the cache and goes to a C++
build without the vector headers ("'at::vec' has not been declared"); under ``avx2`` after an
AVX-512 run, the 16-lane code builds against 8-lane vectors and returns wrong values. The chapter
writes the picked width into ``cpp.simdlen``, which the key does hash. This test runs the
chapter's own line in three processes sharing one cache: native, forced ``default``, native again.
"""
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "11_compile.ipynb"

PROGRAM = r'''
import json, sys
import torch
from torch._inductor.cpu_vec_isa import pick_vec_isa
from torch._inductor.utils import run_and_get_code

exec(sys.argv[1])       # the chapter's setting
torch.manual_seed(0)
x = torch.randn(40, 37)
f = lambda x: torch.sigmoid(1.702 * x) * x + 0.5
out, codes = run_and_get_code(torch.compile(f), x)
torch.testing.assert_close(out, f(x))
print(json.dumps({"vectorized": "at::vec::" in codes[0], "isa": str(pick_vec_isa())}))
'''


def chapter_setting():
    """The chapter's line that writes Inductor's vector width into its settings."""
    cells = json.loads(CHAPTER.read_text())["cells"]
    lines = ["".join(c["source"]).splitlines() for c in cells if c["cell_type"] == "code"]
    return next(line for cell in lines for line in cell if "cpp.simdlen =" in line)


def compile_in_process(cache, capability):
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    run = subprocess.run([sys.executable, "-c", PROGRAM, chapter_setting()], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the forced capabilities are x86-64's")
def test_a_cached_graph_follows_the_forced_capability(tmp_path):
    native = compile_in_process(tmp_path, None)
    forced = compile_in_process(tmp_path, "default")
    assert forced == {"vectorized": False, "isa": "INVALID_VEC_ISA"}
    assert compile_in_process(tmp_path, None) == native     # not the scalar graph cached last
