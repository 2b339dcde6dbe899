"""The benchmark script runs (``make bench`` is not part of the test run, so this keeps it working).
No timing is checked: only that every case builds, runs and is reported."""
import importlib.util
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "run.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_quick_case_computes_what_torch_computes(bench):
    for name, theirs, ours, _, target in bench.cases(quick=True):
        assert target.startswith("ratio <= "), name
        expected, got = theirs(), ours()
        if isinstance(expected, torch.Tensor):      # the MLP step returns (None, None, None)
            torch.testing.assert_close(got.to_torch(), expected, rtol=1e-4, atol=1e-3, msg=name)


def test_a_partial_run_prints_its_case_and_writes_nothing(bench, capsys, tmp_path):
    bench.main(["--quick", "--only", "add of one element", "--output", str(tmp_path / "out.json")])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["case", "torch", "internals", "ratio"]
    assert lines[1].startswith("per-call overhead: add of one element") and len(lines) == 2
    assert not (tmp_path / "out.json").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_benchmarks_refuse_without_a_gpu(bench, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--device", "cuda"])
    assert exit_info.value.code == 2
    assert "--device cuda needs an NVIDIA GPU" in capsys.readouterr().err
