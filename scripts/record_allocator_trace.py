"""Record real torch's caching-allocator numbers on a GPU, for tests/cuda/test_caching_allocator.py.

Run on a machine with a CUDA GPU (Colab will do), from the repository root:

    python scripts/record_allocator_trace.py

It runs every program of tests/allocator_programs.py through torch and writes, after each step,
memory_allocated, memory_reserved, the peaks, the retry/OOM counters and every segment's block
sizes to tests/data/allocator_trace_cuda.json. Commit that file: the test then replays the same
programs on internals and requires the same numbers.
"""
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from allocator_programs import PROGRAMS, run_program  # noqa: E402


def main():
    import torch
    if not torch.cuda.is_available():
        sys.exit("No CUDA GPU: torch's allocator can only be recorded on a GPU.")
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING"):
        if os.environ.get(name):
            sys.exit(f"Unset {name}: the programs assume torch's default allocator settings.")
    trace = {
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(),
        "device_total": torch.cuda.mem_get_info()[1],
        "programs": {name: run_program(torch, program) for name, program in PROGRAMS.items()},
    }
    out = ROOT / "tests" / "data" / "allocator_trace_cuda.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(trace, indent=1) + "\n")
    print(f"wrote {out} ({len(trace['programs'])} programs, torch {trace['torch']}, {trace['gpu']})")


if __name__ == "__main__":
    main()
