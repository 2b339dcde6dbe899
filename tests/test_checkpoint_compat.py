"""Checkpoints holding more than tensors, in both directions between torch and internals: a
torch.Size, dtypes, devices, sets, complex numbers and bytes; map_location as a device, a dict
or a function; torch's default weights_only=None; and torch's errors for a missing directory."""
import io

import pytest
import torch

import internals


def _payload(lib):
    size = internals.Size([2, 3]) if lib is internals else torch.Size([2, 3])
    return {"size": size, "dtype": lib.float64, "cpu": lib.device("cpu"), "cuda1": lib.device("cuda", 1),
            "set": {1, 2}, "complex": 1 + 2j, "bytes": b"ab", "tensor": lib.arange(3.0)}


def _describe(payload):
    """Each value's type and text, tensors by their values (internals' names written as torch's)."""
    return {k: ("tensor", v.tolist()) if hasattr(v, "tolist") and not isinstance(v, tuple)
            else (type(v).__name__, str(v).replace("internals.", "torch.")) for k, v in payload.items()}


@pytest.mark.parametrize("saver, loader", [(torch, internals), (internals, torch), (internals, internals)],
                         ids=["torch_to_internals", "internals_to_torch", "internals_round_trip"])
def test_non_tensor_values_load_across_libraries(saver, loader):
    buffer = io.BytesIO()
    saver.save(_payload(saver), buffer)
    buffer.seek(0)
    assert _describe(loader.load(buffer)) == _describe(_payload(torch))


@pytest.mark.parametrize("map_location", [{"cpu": "cpu"}, lambda storage, location: storage,
                                          lambda storage, location: None, "cpu", None],
                         ids=["dict", "function", "function_returning_none", "string", "none"])
def test_map_location_forms(map_location):
    buffer = io.BytesIO()
    torch.save({"t": torch.arange(4.0)}, buffer)
    buffer.seek(0)
    ours = internals.load(buffer, map_location=map_location, weights_only=None)["t"]
    buffer.seek(0)
    theirs = torch.load(buffer, map_location=map_location, weights_only=None)["t"]
    assert ours.tolist() == theirs.tolist() and str(ours.device) == str(theirs.device)


def test_mmap_from_a_path(tmp_path):
    path = tmp_path / "t.pt"
    torch.save({"t": torch.arange(3)}, path)
    assert internals.load(path, mmap=True)["t"].tolist() == torch.load(path, mmap=True)["t"].tolist()


def test_saving_into_a_missing_directory(tmp_path):
    path = tmp_path / "missing" / "t.pt"
    with pytest.raises(RuntimeError) as theirs:
        torch.save({}, path)
    with pytest.raises(RuntimeError) as ours:
        internals.save({}, path)
    assert str(ours.value) == str(theirs.value)
