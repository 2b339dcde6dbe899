"""``compile``'s ``mode=`` and ``options=`` checked as torch.compile checks them, before any
tracing: an unknown Inductor option, a value of the wrong type, or a mode given beside options
is a RuntimeError with torch's first words; known options are taken."""
import pytest
import torch

import internals

CASES = {
    "unknown option": {"options": {"no_such_option": True}},
    "wrong type": {"options": {"max_autotune": 1}},
    "dashes read as underscores": {"options": {"max-autotune": "yes"}},
    "mode beside options": {"mode": "default", "options": {}},
    "unknown mode": {"mode": "fastest"},
}


def _outcome(lib, kwargs):
    try:
        lib.compile(lambda x: x * 2, **kwargs)
    except Exception as error:      # noqa: BLE001 -- the class is what is compared
        return type(error).__name__, str(error).split(",")[0].split(":")[0]
    return "accepted", None


@pytest.mark.parametrize("case", CASES)
def test_bad_settings_are_refused_as_torch_refuses_them(case):
    ours, theirs = _outcome(internals, CASES[case]), _outcome(torch, CASES[case])
    assert ours == theirs and ours[0] == "RuntimeError"


@pytest.mark.parametrize("options", [{"max_autotune": True}, {"trace.enabled": True}, {"epilogue-fusion": False}])
def test_known_options_are_taken_and_the_function_still_runs(options):
    assert _outcome(torch, {"options": options}) == ("accepted", None)
    compiled = internals.compile(lambda x: x * 2, options=options)
    assert compiled(internals.ones(2)).tolist() == [2.0, 2.0]
