"""``Module.load_state_dict(..., assign=True)`` against torch: the checkpoint's tensors become the
module's parameters and buffers (their storage, their dtype), parameters stay Parameters with
the module's ``requires_grad``, a Parameter in the state is kept as itself, and the usual key and
shape errors still come first."""
import pytest
import torch

import internals


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    model[0].bias.requires_grad_(False)
    return model


def _state(lib):
    return {"0.weight": lib.arange(6.0, dtype=lib.float64).reshape(2, 3),
            "0.bias": lib.nn.Parameter(lib.ones(2)),
            "1.weight": lib.full((2,), 2.0), "1.bias": lib.zeros(2),
            "1.running_mean": lib.ones(2), "1.running_var": lib.full((2,), 3.0),
            "1.num_batches_tracked": lib.tensor(7)}


def _facts(lib, model, state):
    out = {}
    for key, value in state.items():
        mod, name = key.split(".")
        own = getattr(model[int(mod)], name)
        out[key] = (type(own).__name__, own.data_ptr() == value.data_ptr(), str(own.dtype).split(".")[-1],
                    own.requires_grad, own is value)
    return out


@pytest.mark.parametrize("assign", [True, False])
def test_assign_makes_the_checkpoints_tensors_the_modules(assign):
    facts = []
    for lib in (internals, torch):
        model, state = _model(lib), _state(lib)
        result = model.load_state_dict(state, assign=assign)
        assert (result.missing_keys, result.unexpected_keys) == ([], [])
        facts.append(_facts(lib, model, state))
    assert facts[0] == facts[1]


def test_assign_keeps_the_key_and_shape_errors():
    for lib in (internals, torch):
        state = _state(lib)
        state["0.weight"] = lib.ones(3, 3)
        with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
            _model(lib).load_state_dict(state, assign=True)
        state = _state(lib)
        del state["1.bias"]
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.bias"'):
            _model(lib).load_state_dict(state, assign=True)
