"""DistributedDataParallel: internals' reducer beside torch's, on two processes over loopback gloo.

One set of processes runs every program below for both libraries (``examples.in_sequence``), so
the processes start once; each comparison then reads its part of the results.
"""
import random

import numpy as np
import pytest
import torch
import torch.distributed as tdist

import internals
from internals.autograd import Variable
from internals.distributed import _compute_bucket_assignment_by_size, as_torch, examples
from internals.testing import assert_within_ulps

# Layer widths and bucket caps chosen so that the parameters fall into several buckets: a
# Linear(8, 8) weight is 256 bytes, so a cap of 0.0002 MiB (209 bytes) closes a bucket on it.
CONFIGS = {
    "small buckets": dict(sizes=(4, 8, 8, 2), steps=3, bucket_cap_mb=0.0002, seed=0),
    "default caps": dict(sizes=(4, 8, 2), steps=2, seed=1),
    "no_sync": dict(sizes=(4, 8, 2), steps=2, micro=3, bucket_cap_mb=0.0001, seed=2),
    "unused parameter": dict(sizes=(4, 8, 2), steps=2, spare=True, find_unused_parameters=True,
                             bucket_cap_mb=0.0001, seed=3),
}
LIBS = ("internals", "torch")
# A few SGD steps on float32: BLAS and internals' matmul sum in different orders, and the step
# carries the difference forward; a single process sums the batch in one piece, not per rank.
TRAIN_ULPS = 64


@pytest.fixture(scope="module")
def results():
    """Every program's result on both ranks, by (program, config or library)."""
    single = {name: examples.train(0, 1, ddp=False, **cfg) for name, cfg in CONFIGS.items()}
    plan = [("train", dict(lib=lib, **cfg)) for cfg in CONFIGS.values() for lib in LIBS]
    plan += [("unfinished_reduction", dict(lib=lib)) for lib in LIBS]
    plan += [("never_arrives", dict(lib=lib, timeout_s=1.0)) for lib in LIBS]
    ranks = examples.run_on_processes(examples.in_sequence, world_size=2, timeout=240, runs=plan)
    out = {}
    for i, (program, kwargs) in enumerate(plan):
        config = next((n for n, c in CONFIGS.items() if c.items() <= kwargs.items()), None)
        out[program, config, kwargs["lib"]] = [r[i] for r in ranks]
    out["single"] = single
    return out


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_training_equals_torch_ddp(results, config):
    ours, theirs = results["train", config, "internals"], results["train", config, "torch"]
    for rank in range(2):
        assert_within_ulps(ours[rank]["losses"], theirs[rank]["losses"], TRAIN_ULPS)
        for p, q in zip(ours[rank]["weights"], theirs[rank]["weights"], strict=True):
            assert_within_ulps(p, q, TRAIN_ULPS)


@pytest.mark.parametrize("config", CONFIGS)
def test_all_reduces_launched_as_torch(results, config):
    """Same buckets, same parameters in each, launched in the same order, step by step (torch's
    logged by a comm hook); the second step shows the buckets rebuilt in gradient order."""
    ours, theirs = results["train", config, "internals"], results["train", config, "torch"]
    for rank in range(2):
        assert ours[rank]["launches"] == theirs[rank]["launches"]


@pytest.mark.parametrize("config", CONFIGS)
def test_ranks_agree_and_equal_one_process(results, config):
    ours, single = results["train", config, "internals"], results["single"][config]
    for p0, p1, p in zip(ours[0]["weights"], ours[1]["weights"], single["weights"], strict=True):
        np.testing.assert_array_equal(p0, p1)       # every rank applies the same averaged gradient
        assert_within_ulps(p0, p, TRAIN_ULPS)


def test_no_sync_arms_one_backward_per_step(results):
    """Only the last micro-batch's backward marks gradients ready and launches all-reduces."""
    ours = results["train", "no_sync", "internals"][0]
    steps, micro = CONFIGS["no_sync"]["steps"], CONFIGS["no_sync"]["micro"]
    n_params = len(ours["weights"])
    assert [e[0] for e in ours["events"]].count("forward done") == steps
    assert sum(e[0] == "grad ready" for e in ours["events"]) == steps * n_params
    assert len(ours["losses"]) == steps * micro


def test_unused_parameter_keeps_no_gradient(results):
    ours = results["train", "unused parameter", "internals"][0]
    internals.manual_seed(CONFIGS["unused parameter"]["seed"])
    initial = examples.make_model(internals, (4, 8, 2), spare=True)
    spare = [p.detach().numpy() for p in initial.spare.parameters()]
    for p, q in zip(ours["weights"][-2:], spare, strict=True):
        np.testing.assert_array_equal(p, q)         # no process used it: SGD never moved it


def test_unused_parameter_without_detection_raises_as_torch(results):
    ours, theirs = results["unfinished_reduction", None, "internals"], results["unfinished_reduction", None, "torch"]
    assert ours == theirs
    assert ours[0][1] == "RuntimeError"


def test_peer_that_never_arrives_times_out_as_torch(results):
    ours, theirs = results["never_arrives", None, "internals"][0], results["never_arrives", None, "torch"][0]
    assert ours[:2] == theirs[:2]
    assert "Timed out" in ours[2]


@pytest.mark.parametrize("seed", range(4))
def test_bucket_assignment_equals_torch(seed):
    rng = random.Random(seed)
    for _ in range(50):
        n = rng.randint(1, 8)
        arrival = rng.sample(range(n), n) if rng.random() < 0.5 else []
        # Buckets left open at the end come out in the order of torch's hash map when the
        # tensors name their indices: one dtype keeps that order defined.
        dtypes = [torch.float32] if arrival else [torch.float32, torch.float64, torch.float16]
        tensors = [torch.empty(rng.randint(0, 40), dtype=rng.choice(dtypes)) for _ in range(n)]
        limits = [rng.randint(1, 200) for _ in range(rng.randint(1, 3))]
        theirs = tdist._compute_bucket_assignment_by_size(tensors, limits, [False] * n, arrival)
        ours = _compute_bucket_assignment_by_size(tensors, limits, [False] * n, arrival)
        assert ours == ([list(b) for b in theirs[0]], list(theirs[1]))


def _callback_order(lib, engine):
    events = []
    w = lib.ones(2, requires_grad=True)

    def hook(param):
        events.append("grad accumulated")
        engine.queue_callback(lambda: events.append(("callback", param.grad.tolist())))
    w.register_post_accumulate_grad_hook(hook)
    (w * 3).sum().backward()
    events.append("backward returned")
    return events


def test_final_callback_runs_after_the_last_node_as_torch():
    assert (_callback_order(internals, Variable._execution_engine)
            == _callback_order(torch, torch.autograd.Variable._execution_engine))


def test_queue_callback_outside_backward_raises_as_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    with pytest.raises(RuntimeError) as ours:
        Variable._execution_engine.queue_callback(lambda: None)
    assert str(ours.value) == str(theirs.value)


def test_as_torch_shares_the_bytes_of_a_view():
    base = internals.arange(12.0)
    view = base.view(3, 4).t()[1:]
    shared = as_torch(view)
    assert (shared.shape, shared.stride(), shared.storage_offset()) == (
        tuple(view.shape), view.stride(), view.storage_offset())
    shared.mul_(-1)             # what a collective writes lands in the internals tensor
    assert base.tolist() == [-v if (i % 4) >= 1 else v for i, v in enumerate(range(12))]
