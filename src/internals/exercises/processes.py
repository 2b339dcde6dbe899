"""Checker for chapter 12 (Beyond one process).

- ``check_in_order(fn)``: ``fn(results)`` takes ``(task number, batch)`` pairs in the order
  workers finished them and yields the batches in task order, each as soon as every task up to
  it has arrived: the reorder buffer of ``_MultiProcessingDataLoaderIter._next_data``.
"""
import numpy as np

__all__ = ["check_in_order", "reference_in_order"]


def reference_in_order(results):
    """Hold early batches by task number; yield every batch whose turn has come."""
    early, turn = {}, 0
    for n, batch in results:
        early[n] = batch
        while turn in early:
            yield early.pop(turn)
            turn += 1


def _run(fn, order):
    """What ``fn`` yields for results arriving in ``order``, and how many had arrived when it
    yielded each batch."""
    arrived, out, when = [], [], []

    def results():
        for n in order:
            arrived.append(n)
            yield n, f"batch {n}"

    for batch in fn(results()):
        out.append(batch)
        when.append(len(arrived))
    return out, when


def check_in_order(fn, trials=200, seed=0):
    """Shuffled arrivals of 0 to 11 tasks: the batches must come out in task order, and each as
    soon as all tasks up to it have arrived (not held until the end)."""
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        order = rng.permutation(int(rng.integers(0, 12))).tolist()
        got, want = _run(fn, order), _run(reference_in_order, order)
        if got[0] != want[0]:
            raise AssertionError(f"arrivals {order}: expected {want[0]}, got {got[0]}")
        if got[1] != want[1]:
            raise AssertionError(f"arrivals {order}: the batches are right but late; each should come "
                                 f"out once this many results had arrived: {want[1]}, not {got[1]}")
    return f"in_order: {trials} shuffled arrivals, every batch in order and on time"
