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
