"""State dicts carry each module's version in ``_metadata``, as torch's do; BatchNorm (version 2)
fills num_batches_tracked from a plain dict (no version) and reports it missing from a versioned
one, exactly as torch does, strict or not."""
import pytest
import torch

import internals


def _load(lib, plain, strict):
    sd = lib.nn.BatchNorm1d(2).state_dict()
    del sd["num_batches_tracked"]
    if plain:
        sd = dict(sd)
    try:
        result = lib.nn.BatchNorm1d(2).load_state_dict(sd, strict=strict)
        return list(result.missing_keys), list(result.unexpected_keys)
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("plain", [False, True], ids=["versioned", "plain_dict"])
@pytest.mark.parametrize("strict", [True, False])
def test_batch_norm_without_num_batches_tracked_matches_torch(plain, strict):
    assert _load(internals, plain, strict) == _load(torch, plain, strict)


def test_metadata_versions_match_torch():
    def versions(lib):
        return dict(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)).state_dict()._metadata)
    assert versions(internals) == versions(torch)


def test_loading_leaves_the_callers_dict_unchanged():
    sd = dict(internals.nn.BatchNorm1d(2).state_dict())
    del sd["num_batches_tracked"]
    internals.nn.BatchNorm1d(2).load_state_dict(sd)
    assert "num_batches_tracked" not in sd


def _with_extra_state(lib):
    """A module with state that is no tensor, kept by torch's get_extra_state/set_extra_state."""
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.count = 0

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]
    return Counter


@pytest.mark.parametrize("lib", [torch, internals], ids=["torch", "internals"])
def test_extra_state_is_saved_and_restored(lib):
    """``get_extra_state`` lands in the state_dict under ``_extra_state`` (after the module's
    tensors) and ``load_state_dict`` hands it to ``set_extra_state``."""
    counter = _with_extra_state(lib)
    model = lib.nn.Sequential(counter(), lib.nn.Linear(1, 1))
    model[0].count = 7
    state = model.state_dict()
    assert list(state) == ["0._extra_state", "1.weight", "1.bias"]
    fresh = lib.nn.Sequential(counter(), lib.nn.Linear(1, 1))
    fresh.load_state_dict(state)
    assert fresh[0].count == 7


def _incompatible(lib, with_extra, state):
    """The missing and unexpected keys of a non-strict load, as plain lists."""
    first = _with_extra_state(lib)() if with_extra else lib.nn.Linear(1, 1)
    model = lib.nn.Sequential(first, lib.nn.Linear(1, 1))
    result = model.load_state_dict({k: v(lib) if callable(v) else v for k, v in state.items()}, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)


@pytest.mark.parametrize("with_extra, state", [
    (True, {"1.weight": lambda lib: lib.ones(1, 1), "1.bias": lambda lib: lib.ones(1)}),
    (False, {"0._extra_state": 3, "1._extra_state": 4, "0": lambda lib: lib.ones(1)}),
], ids=["extra_state_missing", "extra_state_and_child_name_unexpected"])
def test_extra_state_keys_missing_and_unexpected_as_torchs(with_extra, state):
    """A module that keeps extra state misses its key; one that does not finds it unexpected, as
    it does a key that names a child with no dotted rest."""
    assert _incompatible(internals, with_extra, state) == _incompatible(torch, with_extra, state)


def test_missing_extra_state_fails_a_strict_load_as_torchs():
    for lib in (torch, internals):
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
            _with_extra_state(lib)().load_state_dict({})


@pytest.mark.parametrize("saved", [[2.0], [2.0, 3.0]], ids=["one_element", "two_elements"])
def test_one_element_entry_loads_into_a_0d_tensor_as_torchs(saved):
    """torch's backward compatibility with 0.3 checkpoints: a (1,) entry loads into a 0-d
    parameter or buffer; any other 1-d shape is a size mismatch."""
    results = []
    for lib in (torch, internals):
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.tensor(1.0))
        m.register_buffer("b", lib.tensor(3))
        try:
            m.load_state_dict({"p": lib.tensor(saved), "b": lib.tensor([5])})
            results.append((m.p.item(), m.b.item(), m.p.shape == ()))
        except RuntimeError as error:
            results.append(str(error).replace("internals", "torch"))
    assert results[0] == results[1]
