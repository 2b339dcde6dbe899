"""The loops the checkers share: run the reader's function on cases, compare, report in one line.

``run_cases`` takes a list of seeded cases and a reference (torch's answer); ``run_generated``
draws cases from a hypothesis strategy (derandomized, so a notebook prints the same line every
run) and calls ``check_one(case)``, which raises ``AssertionError`` when the reader's answer is wrong.
"""
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


def readers_answer(fn, *args, want):
    """``fn(*args)``; an exception it raises becomes a wrong answer that says what was expected
    (``want``, a description of torch's answer), so the report shows both sides."""
    try:
        return fn(*args)
    except Exception as e:      # noqa: BLE001 - the reader's error is reported, not raised
        raise AssertionError(f"your function raised {type(e).__name__}: {e}\n  expected {want}") from None


def run_generated(name, strategy, check_one, max_examples=40):
    """Return True if ``check_one`` held on every drawn case; print a one-line verdict."""
    from hypothesis import HealthCheck, given, settings  # hypothesis is heavy: only a checker needs it

    seen, passed = [], []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(case):
        seen.append(case)
        check_one(case)
        passed.append(case)

    # hypothesis shrinks a failure before it gives up: the last case it ran is the smallest
    # failing input it found, which is the one worth reading.
    try:
        run()
    except AssertionError as e:
        print(wrap(f"{name}: wrong on the smallest failing input found, {seen[-1]!r}:\n  {e}"))
        return False
    except Exception as e:     # noqa: BLE001 - the reader's code raised: report it like a wrong answer
        print(wrap(f"{name}: raised on the smallest failing input found, {seen[-1]!r}:\n  {type(e).__name__}: {e}"))
        return False
    print(f"{name}: right on all {len(passed)} generated cases")
    return True
