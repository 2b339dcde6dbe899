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


# ---------------------------------------------------------------------- every Inductor setting of torch's
def test_the_accepted_options_are_torchs_settings():
    """The table (``scripts/inductor_options.py``) holds torch's settings, in torch's order; run
    the script again after installing another torch."""
    from torch._inductor import config

    from internals._inductor.config import known_options, torch_version
    assert torch_version() == torch.__version__
    assert list(known_options()) == list(config.get_config_copy())


class _Other:
    """A value of no setting's type."""


def _wrong_value(default_type):
    return 1.5 if default_type == "bool" else _Other()


def _every_option():
    from internals._inductor.config import known_options
    return list(known_options().items())


@pytest.mark.parametrize("chunk", range(8))
def test_each_option_is_checked_as_torch_checks_it(chunk):
    """For every setting, in eight chunks: its default value is taken, a value of another type
    refused (or taken, for a generic type) with torch's exception class and message."""
    from torch._inductor import config
    defaults = config.get_config_copy()
    options = _every_option()[chunk::8]
    for name, (_, default_type) in options:
        for value in (defaults[name], _wrong_value(default_type)):
            theirs = _outcome_full(torch, {"options": {name: value}})
            ours = _outcome_full(internals, {"options": {name: value}})
            assert ours == theirs, name


def _outcome_full(lib, kwargs):
    try:
        compiled = lib.compile(lambda x: x * 2, **kwargs)
    except Exception as error:      # noqa: BLE001 -- the class and the message are compared
        return type(error).__name__, str(error)
    if lib is internals:
        assert compiled.options == {k.replace("-", "_"): v for k, v in kwargs["options"].items()}
    return "accepted", None


def test_an_unknown_option_lists_torchs_settings():
    kwargs = {"options": {"max_autotune": True, "no_such_setting": 1}}
    assert _outcome_full(internals, kwargs) == _outcome_full(torch, kwargs)
