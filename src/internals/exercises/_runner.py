"""The loop every checker shares: run the reader's function and torch on each case, compare, report."""
import random

from ..display import wrap

#: Failures shown in full; the rest are counted.
SHOWN = 3


def random_shape(rng, max_dims=4, max_size=5, min_size=0):
    return tuple(rng.randint(min_size, max_size) for _ in range(rng.randint(0, max_dims)))


def run_cases(name, fn, cases, reference, same=lambda got, want: got == want):
    """Call ``fn(*case)`` and ``reference(*case)`` for each case; print a one-line summary or the
    failures (input, expected, got) and raise ``AssertionError``. An exception raised by ``reference``
    means torch rejects the input: the reader's ``fn`` must raise too (any exception)."""
    failures = []
    for case in cases:
        try:
            want, rejects = reference(*case), None
        except Exception as e:  # noqa: BLE001 - torch's rejection is an expected outcome
            want, rejects = None, e
        try:
            got, raised = fn(*case), None
        except Exception as e:  # noqa: BLE001 - the reader's error is reported, not raised
            got, raised = None, e
        if rejects is not None:
            if raised is None:
                failures.append((case, f"torch raises {type(rejects).__name__}", repr(got)))
        elif raised is not None:
            failures.append((case, repr(want), f"{type(raised).__name__}: {raised}"))
        elif not same(got, want):
            failures.append((case, repr(want), repr(got)))
    if not failures:
        print(f"{name}: all {len(cases)} cases match torch")
        return
    print(f"{name}: {len(failures)} of {len(cases)} cases differ from torch")
    for case, want, got in failures[:SHOWN]:
        args = ", ".join(repr(a) if not hasattr(a, "shape") else f"<array shape {a.shape}>" for a in case)
        print(wrap(f"  input {args}\n    expected {want}\n    got      {got}"))
    raise AssertionError(f"{name}: {len(failures)} of {len(cases)} cases differ from torch (printed above)")


def seeded(seed):
    return random.Random(seed)
