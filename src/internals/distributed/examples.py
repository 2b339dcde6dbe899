"""Small data-parallel programs run on several local processes, for the DDP chapter and its tests.

``run_on_processes`` starts one fresh Python process per rank (the ``spawn`` start method, so it
works from a notebook and from pytest alike), joins them to a gloo process group over loopback,
runs one of the programs below in each, and returns what each rank returned. Nothing waits
forever: the processes are killed past ``timeout`` seconds and a failing rank's traceback is
raised in the caller.

The programs run the same code on ``internals`` or on ``torch`` (``lib``), so a chapter or a test
can put the two side by side.
"""
import contextlib
import importlib
import multiprocessing
import os
import pickle
import socket
import tempfile
import time
import traceback
from datetime import timedelta

__all__ = ["run_on_processes", "in_sequence", "train", "never_arrives", "unfinished_reduction", "make_model",
           "make_data"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(program, rank, world_size, port, config, folder):
    # What the rank prints (compile notices, gloo's warnings) goes to a file, not into the caller's
    # terminal or notebook cell, where it would interleave at random.
    log = os.open(os.path.join(folder, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    import numba  # a new process: only its programs need numba's and torch's thread settings
    import torch  # as numba: thread settings of a new process
    torch.set_num_threads(1)        # the ranks share the machine's cores
    numba.set_num_threads(1)
    try:
        torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                             world_size=world_size, timeout=timedelta(seconds=60))
        try:
            outcome = ("ok", globals()[program](rank, world_size, **config))
        finally:
            torch.distributed.destroy_process_group()
    except BaseException:           # noqa: BLE001 -- any failure travels back to the caller
        outcome = ("error", traceback.format_exc())
    with open(os.path.join(folder, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(outcome, f)


def _warm_kernels():
    """Compile, or load from Numba's disk cache, the kernels the reducer runs, here and once:
    otherwise every rank would compile them at the same time."""
    import internals  # a cycle: this module is part of the package
    bucket = internals.zeros(6)
    bucket.narrow(0, 0, 6).view(2, 3).copy_(internals.ones(2, 3)).mul_(0.5).clone()
    bucket.zero_()
    used = internals.zeros(3, dtype=internals.int32)
    used[1] = 1
    int(used[1])
    internals.tensor([1, 2], dtype=internals.int64).tolist()


def run_on_processes(program, world_size=2, timeout=120, **config):
    """Run ``program(rank, world_size, **config)`` on ``world_size`` new processes; their results by rank."""
    _warm_kernels()
    ctx = multiprocessing.get_context("spawn")
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        procs = [ctx.Process(target=_worker, args=(program.__name__, r, world_size, port, config, folder))
                 for r in range(world_size)]
        for p in procs:
            p.start()
        deadline = time.monotonic() + timeout
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        if any(p.is_alive() for p in procs):
            for p in procs:
                p.kill()
                p.join()
            raise TimeoutError(f"{program.__name__} did not finish within {timeout} s")
        results = []
        for r, p in enumerate(procs):
            path = os.path.join(folder, f"rank{r}.pkl")
            if not os.path.exists(path):
                raise RuntimeError(f"rank {r} exited with code {p.exitcode} and no result")
            with open(path, "rb") as f:
                status, value = pickle.load(f)
            if status == "error":
                raise RuntimeError(f"rank {r} failed:\n{value}")
            results.append(value)
        return results


# ---------------------------------------------------------------------- the model and its data
def make_model(lib, sizes, spare=False):
    """Linear layers with tanh between; ``spare`` registers one more Linear that forward never uses."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            layers = []
            for a, b in zip(sizes, sizes[1:]):
                layers += [lib.nn.Linear(a, b), lib.nn.Tanh()]
            self.body = lib.nn.Sequential(*layers[:-1])
            if spare:
                self.spare = lib.nn.Linear(sizes[-1], sizes[-1])

        def forward(self, x):
            return self.body(x)
    return Net()


def make_data(lib, sizes, steps, micro, batch):
    """Inputs and targets for every step and micro-batch, drawn after the model from the same seed."""
    return lib.randn(steps, micro, batch, sizes[0]), lib.randn(steps, micro, batch, sizes[-1])


def _numpy(t):
    return t.detach().numpy().copy()


def _torch_logging_hook(world_size, index_of):
    """A comm hook that records which bucket torch launches with which parameters, then does what
    torch does without a hook: scale by 1/world size and sum."""
    import torch.distributed as tdist  # torch is optional for the package

    def hook(log, bucket):
        log.append((bucket.index(), [index_of[p.data_ptr()] for p in bucket.parameters()]))
        buf = bucket.buffer().mul_(1.0 / world_size)
        return tdist.all_reduce(buf, async_op=True).get_future().then(lambda fut: fut.value()[0])
    return hook


def train(rank, world_size, lib="internals", seed=0, sizes=(4, 8, 8, 2), steps=3, micro=1, batch=12,
          lr=0.1, bucket_cap_mb=None, spare=False, find_unused_parameters=False, ddp=True):
    """Train a few SGD steps; each rank takes its slice of every batch (all of it without ``ddp``).

    Returns the losses, the final weights, and per step the all-reduces launched as
    ``(bucket index, parameter indices)``; for internals also the reducer's event log."""
    lib = importlib.import_module(lib)
    lib.manual_seed(seed)
    model = make_model(lib, sizes, spare)
    x, y = make_data(lib, sizes, steps, micro, batch)
    params = list(model.parameters())
    launches, per_step, events = [], [], None
    if ddp:
        net = lib.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb,
                                                      find_unused_parameters=find_unused_parameters)
        if lib.__name__ == "torch":
            net.register_comm_hook(launches, _torch_logging_hook(world_size, {p.data_ptr(): i
                                                                              for i, p in enumerate(params)}))
        else:
            launches = net.reducer.launches
        share = batch // world_size
        x, y = x[:, :, rank * share:(rank + 1) * share], y[:, :, rank * share:(rank + 1) * share]
    else:
        net = model
    opt = lib.optim.SGD(params, lr=lr)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        for m in range(micro):
            quiet = net.no_sync() if ddp and m < micro - 1 else contextlib.nullcontext()
            with quiet:
                loss = lib.nn.functional.mse_loss(net(x[step, m]), y[step, m])
                loss.backward()
            losses.append(loss.item())
        opt.step()
        per_step.append(launches[len(sum(per_step, [])):])
    if ddp and lib.__name__ == "internals":
        events = net.reducer.events
    return {"losses": losses, "weights": [_numpy(p) for p in params], "launches": per_step, "events": events}


def never_arrives(rank, world_size, lib="internals", timeout_s=2.0):
    """Rank 0 runs a backward whose all-reduce rank 1 never joins; returns rank 0's error class and
    message. Both ranks build the DDP module (its construction is collective); then rank 1 waits."""
    import torch.distributed as tdist  # torch is optional for the package
    lib = importlib.import_module(lib)
    group = tdist.new_group(timeout=timedelta(seconds=timeout_s))
    lib.manual_seed(0)
    model = make_model(lib, (4, 2))
    net = lib.nn.parallel.DistributedDataParallel(model, process_group=group)
    outcome = None
    if rank == 0:
        try:
            net(lib.randn(3, 4)).sum().backward()
        except Exception as e:      # noqa: BLE001 -- the error is the result
            outcome = (type(e).__module__, type(e).__name__, str(e).splitlines()[0][:200])
    tdist.barrier()                 # rank 1 stays alive until rank 0 has seen its error
    return outcome


def unfinished_reduction(rank, world_size, lib="internals"):
    """A parameter forward never uses, without ``find_unused_parameters``: its bucket never fills,
    so the next forward refuses to start. Returns the error class and its first sentence."""
    lib = importlib.import_module(lib)
    lib.manual_seed(0)
    net = lib.nn.parallel.DistributedDataParallel(make_model(lib, (4, 2), spare=True))
    net(lib.randn(3, 4)).sum().backward()
    try:
        net(lib.randn(3, 4))
    except Exception as e:          # noqa: BLE001 -- the error is the result
        return (type(e).__module__, type(e).__name__, str(e).split(". ")[0])
    return None


def in_sequence(rank, world_size, runs):
    """Several programs one after the other in the same processes, which start only once:
    ``runs`` is a list of ``(program name, keyword arguments)``; the results come as a list."""
    return [globals()[name](rank, world_size, **kwargs) for name, kwargs in runs]
