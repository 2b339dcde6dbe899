"""Run a reader's function on generated cases and say, in one line, whether it held.

The checkers of chapters 5-9 share this: ``run_cases(name, strategy, check_one)`` draws cases
from a hypothesis strategy (derandomized, so a notebook prints the same line every run), calls
``check_one(case)``, which raises ``AssertionError`` with a message when the reader's answer is
wrong (any other exception is the reader's code failing), and prints either the pass count or the
first failing case with its message.
"""

__all__ = ["run_cases"]


def run_cases(name, strategy, check_one, max_examples=40):
    """Return True if ``check_one`` held on every drawn case; print a one-line verdict."""
    from hypothesis import HealthCheck, given, settings

    seen, passed = [], []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(case):
        seen.append(case)
        check_one(case)
        passed.append(case)

    try:
        run()
    except AssertionError as e:
        print(f"{name}: wrong on {seen[-1]!r}: {e}")
        return False
    except Exception as e:     # noqa: BLE001 - the reader's code raised: report it like a wrong answer
        print(f"{name}: raised on {seen[-1]!r}: {type(e).__name__}: {e}")
        return False
    print(f"{name}: right on all {len(passed)} generated cases")
    return True
