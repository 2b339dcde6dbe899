"""Benchmarks: internals against torch, measured in the same run, printed as ratios.

Each case times torch and internals on the same data (median of repeats, after warm-up, which
also compiles the kernels) and prints both times and ``internals / torch`` (lower is better;
for throughput targets the ratio's inverse is the fraction of torch's throughput). Results are
written, with a description of the machine, to ``src/internals/data/bench_<device>.json``:
package data, so the performance page reads them from the installed package. ``--device cuda``
needs an NVIDIA GPU; it times with TF32 off and synchronises both libraries after each run.

    python benchmarks/run.py [--device cpu|cuda] [--quick] [--only TEXT]
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import torch

import internals

SHORT_CALL_S = 10e-6      # below this a perf_counter pair around one call mostly times itself
# One sample of a short case: many calls in a loop, about 2 ms long. Short samples, and many of
# them, because on shared cores a longer one is rarely left alone from start to end; the best
# sample is the one that was.
SAMPLE_S = 0.002
SAMPLES = 40


def no_sync():
    """The CPU's: a call has finished when it returns."""


def median_times(theirs, ours, repeats, sync=no_sync):
    """Seconds per call of each of two thunks. Their runs alternate, so that both see the same
    machine: on shared cores, memory bandwidth and clock speed drift from second to second.

    A call shorter than ``SHORT_CALL_S`` (for either library) is timed as ``timeit`` times it,
    for both: each sample runs the thunk many times in a loop, and the best sample counts (the
    others were slowed by something else). A longer call, or any call on a device that must be
    synchronised after it, is timed alone, the median counting."""
    for fn in (theirs, ours, theirs, ours):     # warm-up: compiles (or loads) kernels, fills caches
        fn()
    sync()
    if sync is no_sync and min(_one_call(theirs), _one_call(ours)) < SHORT_CALL_S:
        return _best_per_call(theirs, ours)
    times = ([], [])
    for _ in range(repeats):
        for fn, record in zip((theirs, ours), times):
            start = time.perf_counter()
            fn()
            sync()
            record.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def _one_call(fn, calls=100):
    """A first estimate of one call's time, from a short loop."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _best_per_call(theirs, ours):
    """``timeit``'s method: samples of many calls each (about ``SAMPLE_S`` long), the two thunks'
    samples alternating; the best sample of each, divided by its number of calls."""
    timers = [(timeit.Timer(fn), max(1, int(SAMPLE_S / _one_call(fn)))) for fn in (theirs, ours)]
    best = [float("inf"), float("inf")]
    for _ in range(SAMPLES):
        for i, (timer, number) in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best[0], best[1]


def _duration(seconds):
    """Ten characters: milliseconds, or microseconds below one (a one-element add takes about one)."""
    return f"{seconds * 1e3:8.3f}ms" if seconds >= 1e-3 else f"{seconds * 1e6:8.2f}us"


def cases(quick, device="cpu"):
    """(name, torch thunk, internals thunk, repeats, target) for each benchmark on ``device``.

    The targets are the course's. On a GPU, elementwise ops should reach 0.8x torch's
    bandwidth and matmul 0.3x; the reductions have no GPU target and keep the CPU one.
    """
    torch.manual_seed(0)

    def pair(*size):
        t = torch.rand(*size, device=device)
        return t, internals.from_torch(t)

    n = 1 << 22 if quick else 1 << 24
    side = 1024 if quick else 4096
    sq = int(n ** 0.5)
    (x, ix), (y, iy), (m, im) = pair(n), pair(n), pair(side, side)
    (a_sq, ia), (b_sq, ib), (row, irow) = pair(sq, sq), pair(sq, sq), pair(sq)
    flat, strided = (("ratio <= 1.25 (>= 0.8x bandwidth)",) * 2 if device == "cuda" else
                     ("ratio <= 1.11 (>= 0.9x throughput)", "ratio <= 1.43 (>= 0.7x)"))
    out = [
        (f"add, {n} float32, contiguous", lambda: x + y, lambda: ix + iy, 20, flat),
        # The same loop without allocating: a fresh output's page faults can cost more than the add.
        (f"add_, {n} float32, in place (no allocation)", lambda: x.add_(y), lambda: ix.add_(iy), 20, flat),
        (f"add, {sq}x{sq} float32, transposed input", lambda: a_sq.t() + b_sq, lambda: ia.t() + ib, 10, strided),
        (f"add, {sq}x{sq} float32 + broadcast row", lambda: a_sq + row, lambda: ia + irow, 10, strided),
        (f"sum over dim 0, {side}x{side} float32", lambda: m.sum(0), lambda: im.sum(0), 10, "ratio <= 1.43 (>= 0.7x)"),
        (f"sum over dim 1, {side}x{side} float32", lambda: m.sum(1), lambda: im.sum(1), 10, "ratio <= 1.43 (>= 0.7x)"),
    ]
    for size in ((256, 512) if quick else (512, 1024, 2048)):
        (p, ip), (q, iq) = pair(size, size), pair(size, size)
        out.append((f"matmul {size}x{size} float32", lambda p=p, q=q: p @ q, lambda ip=ip, iq=iq: ip @ iq,
                    3 if size >= 2048 else 5, "ratio <= 3.3 (>= 0.3x) at 1024"))
    if device == "cpu":
        out += per_call_cases()
        out.append(("MLP step: 512-512-512-10, batch 256, fwd+bwd+SGD", *mlp_steps(), 10, "ratio <= 3"))
    return out + compiled_cases(quick, pair)


def per_call_cases():
    """What a call costs beyond its loop: one-element operands, timed as ``timeit`` times them
    (see ``median_times``). The add is the course's target; the others walk the same binding and
    dispatcher through other kernels (a wrapped Python number, a reduction, views)."""
    t, i = (torch.ones(1), torch.zeros(1)), (internals.ones(1), internals.zeros(1))
    calls = [("add of one element", lambda x, y: x + y),
             ("add_ of one element, in place", lambda x, y: y.add_(x)),
             ("one element times a Python number", lambda x, y: x * 2),
             ("sum of one element", lambda x, y: x.sum()),
             ("indexing x[0]", lambda x, y: x[0]),
             ("view(-1)", lambda x, y: x.view(-1))]
    return [(f"per-call overhead: {name}", lambda f=f: f(*t), lambda f=f: f(*i), 2000, "ratio <= 10")
            for name, f in calls]


def compiled_cases(quick, pair):
    """internals.compile's fused kernels against torch eager, which makes one memory
    pass per op, and -- in a full run -- against torch.compile's own fused kernel."""
    side = 2048 if quick else 4096
    (x, ix), (bias, ibias) = pair(side, side), pair(side)

    def chain(T):
        return lambda x, bias: (x * T.sigmoid(1.702 * x) + bias) * 0.5     # 5 pointwise ops

    def layer_norm(x):
        mean = x.mean(-1, keepdim=True)
        return (x - mean) / internals.sqrt(((x - mean) ** 2).mean(-1, keepdim=True) + 1e-5)

    ichain, isoftmax = internals.compile(chain(internals)), internals.compile(lambda x: internals.softmax(x, -1))
    ilayer_norm = internals.compile(layer_norm)
    name = f"compiled 5-op chain, {side}x{side} float32"
    out = [
        (f"{name} vs torch eager", lambda: chain(torch)(x, bias), lambda: ichain(ix, ibias), 10,
         "ratio <= 0.5 (>= 2x eager)"),
        (f"compiled softmax(-1), {side}x{side} float32", lambda: torch.softmax(x, -1), lambda: isoftmax(ix), 10,
         "ratio <= 1.5"),
        (f"compiled layer norm (mean/var), {side}x{side} float32",
         lambda: torch.nn.functional.layer_norm(x, (side,)), lambda: ilayer_norm(ix), 10, "ratio <= 1.5"),
    ]
    step_name = "compiled training step: MLP 256-256-256-10, batch 256, fwd+bwd"
    t_step, i_step, t_loss, x_step, y_step = training_steps()
    out.append((f"{step_name} vs torch eager", t_step(t_loss), i_step, 10, "ratio <= 3"))
    if not quick:       # torch.compile's first call runs Inductor and a C++ compiler: a minute or more
        try:
            from torch._inductor.cpu_vec_isa import pick_vec_isa
            # Inductor's graph cache ignores ATEN_CPU_CAPABILITY: the width in its settings is hashed
            torch._inductor.config.cpp.simdlen = pick_vec_isa().bit_width()
            tchain = torch.compile(chain(torch))
            tchain(x, bias)
            out.append((f"{name} vs torch.compile", lambda: tchain(x, bias), lambda: ichain(ix, ibias), 10,
                        "ratio <= 1.5"))
            t_compiled = torch.compile(t_loss)
            t_compiled(x_step, y_step).backward()
            out.append((f"{step_name} vs torch.compile", t_step(t_compiled), i_step, 10, "ratio <= 5"))
        except Exception as e:      # noqa: BLE001 -- any failure means: no torch.compile on this machine
            print(f"torch.compile does not work here ({type(e).__name__}: {e}); its case is left out")
    return out


def training_steps():
    """A training step's forward and backward through compiled code: the MLP and its loss as one
    module, compiled whole, so its parameters become inputs of the compiled function (AOTAutograd
    traces, partitions and compiles the backward). Returns torch's step for a given loss module
    (eager or torch.compile'd), internals' compiled step, torch's loss module and torch's data."""
    def build(lib):
        class MLPLoss(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = lib.nn.Sequential(lib.nn.Linear(256, 256), lib.nn.ReLU(), lib.nn.Linear(256, 256),
                                             lib.nn.ReLU(), lib.nn.Linear(256, 10))

            def forward(self, x, y):
                return ((self.mlp(x) - y) ** 2).mean()
        return MLPLoss()

    torch.manual_seed(0)
    x, y = torch.rand(256, 256), torch.rand(256, 10)
    t_loss, i_loss = build(torch), build(internals)
    i_loss.load_state_dict({k: internals.from_torch(v) for k, v in t_loss.state_dict().items()})
    i_compiled, ix, iy = internals.compile(i_loss), internals.from_torch(x), internals.from_torch(y)

    def t_step(loss):
        return lambda: (t_loss.zero_grad(set_to_none=True), loss(x, y).backward())
    return t_step, lambda: (i_loss.zero_grad(set_to_none=True), i_compiled(ix, iy).backward()), t_loss, x, y


def mlp_steps():
    """One training step (forward, loss, backward, SGD update) for the same MLP in both libraries."""
    def build(lib, state):
        model = lib.nn.Sequential(lib.nn.Linear(512, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512), lib.nn.ReLU(),
                                  lib.nn.Linear(512, 10))
        if state is not None:
            model.load_state_dict(state)
        return model, lib.optim.SGD(model.parameters(), lr=0.01), lib.nn.CrossEntropyLoss()

    def step(model, opt, loss_fn, x, y):
        return lambda: (opt.zero_grad(), loss_fn(model(x), y).backward(), opt.step())

    x, y = torch.rand(256, 512), torch.randint(0, 10, (256,))
    t_model, t_opt, t_loss = build(torch, None)
    i_model, i_opt, i_loss = build(internals, {k: internals.from_torch(v) for k, v in t_model.state_dict().items()})
    return (step(t_model, t_opt, t_loss, x, y),
            step(i_model, i_opt, i_loss, internals.from_torch(x), internals.from_torch(y)))


def cold_start():
    """Seconds for a fresh process to import internals and run its first op (warm kernel cache)."""
    code = ("import time; t=time.perf_counter(); import internals as t_; (t_.ones(4)+1).sum(); "
            "print(time.perf_counter()-t)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # make sure the cache is warm
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(result.stdout.strip().splitlines()[-1])


def ceilings(device="cpu", sync=no_sync):
    """The machine's two roofline ceilings, measured with torch: memory bandwidth (GB/s), the
    better of a 256 MiB ``sum`` (reads only) and a 256 MiB ``copy_`` (reads and writes), and
    arithmetic (GFLOP/s) from a 2048 x 2048 float32 matrix product (2n^3 operations). Medians of
    five runs after a warm-up."""
    def median_time(fn):
        fn()
        sync()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            fn()
            sync()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    src = torch.ones(64 * 1024 * 1024, device=device)
    dst = torch.empty_like(src)
    bandwidth = max(src.nbytes / median_time(src.sum), 2 * src.nbytes / median_time(lambda: dst.copy_(src)))
    n = 2048
    a, b = torch.rand(n, n, device=device), torch.rand(n, n, device=device)
    mm_s = median_time(lambda: torch.mm(a, b))
    return {"bandwidth_GBps": bandwidth / 1e9, "gflops": 2 * n**3 / mm_s / 1e9,
            "how": "torch: the better of a 256 MiB sum and copy_ (bytes moved), a 2048x2048 float32 mm (2n^3)"}


def machine(device="cpu"):
    blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    gpu = {"gpu": torch.cuda.get_device_name()} if device == "cuda" else {}
    return {**gpu, "machine": platform.machine(), "processor": _cpu_model(), "cpus": os.cpu_count(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch_blas": blas.group(1) if blas else "?",
            "transparent_hugepage": _transparent_hugepage(), "python": platform.python_version(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(), "numba_threads": _numba_threads()}


def _cpu_model():
    """The CPU's marketing name (Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _transparent_hugepage():
    """Linux's huge-page policy (always, madvise or never): it decides what a fresh large output
    costs, since NumPy asks for huge pages for large arrays (madvise) and torch's allocator does so
    only when THP_MEM_ALLOC_ENABLE=1."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "n/a"
    chosen = re.search(r"\[(\w+)\]", text)
    return chosen.group(1) if chosen else text.strip()


def _numba_threads():
    import numba
    return numba.get_num_threads()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--output", help="results file (default: src/internals/data/bench_<device>.json)")
    parser.add_argument("--only", help="run only the cases whose name contains this text (nothing is written)")
    args = parser.parse_args(argv)
    sync = no_sync
    if args.device == "cuda":
        if not torch.cuda.is_available() or internals.cuda.is_simulated():
            parser.error("--device cuda needs an NVIDIA GPU that both torch and Numba can use "
                         "(Numba's CUDA simulator runs threads in Python: there is nothing to time)")
        torch.backends.cuda.matmul.allow_tf32 = False       # float32 against float32, as internals computes
        sync = lambda: (torch.cuda.synchronize(), internals.cuda.synchronize())   # noqa: E731
    rows = []
    print(f"{'case':52} {'torch':>10} {'internals':>10} {'ratio':>7}  target")
    for name, theirs, ours, repeats, target in cases(args.quick, args.device):
        if args.only and args.only not in name:
            continue
        t_torch, t_ours = median_times(theirs, ours, repeats, sync)
        rows.append({"case": name, "torch_s": t_torch, "internals_s": t_ours, "ratio": t_ours / t_torch,
                     "target": target})
        print(f"{name:52} {_duration(t_torch)} {_duration(t_ours)} {t_ours / t_torch:7.2f}  {target}")
    if args.only:
        return      # a partial run: keep the results file of the last full one
    start = cold_start()
    print(f"{'cold start: import + first op (warm kernel cache)':52} {'':>10} {start:9.2f}s")
    roof = ceilings(args.device, sync)
    print(f"{'ceilings: memory bandwidth, float32 matmul':52} {roof['bandwidth_GBps']:7.1f} GB/s "
          f"{roof['gflops']:7.1f} GFLOP/s")
    result = {"machine": machine(args.device), "quick": args.quick, "cases": rows, "cold_start_s": start,
              "ceilings": roof}
    output = Path(args.output or Path(__file__).resolve().parent.parent / "src" / "internals" / "data"
                  / f"bench_{args.device}.json")
    output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {output}")


if __name__ == "__main__":
    main()
