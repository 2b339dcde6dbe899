"""``torch.cuda.amp``: the deprecated CUDA spellings of ``GradScaler`` and ``autocast`` warn what
torch warns (``FutureWarning``, the same text) and build the device-generic object for CUDA."""
import warnings

import pytest
import torch

import internals
from internals.amp import is_autocast_enabled


def _future_warnings(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = make()
    return made, [str(w.message) for w in caught if w.category is FutureWarning]


@pytest.mark.parametrize("name", ["GradScaler", "autocast"])
def test_deprecation_warning_matches_torch(name):
    ours, ours_said = _future_warnings(lambda: getattr(internals.cuda.amp, name)())
    _, torch_said = _future_warnings(lambda: getattr(torch.cuda.amp, name)())
    assert ours_said == torch_said and len(torch_said) == 1
    assert isinstance(ours, getattr(internals.amp, name))


def test_grad_scaler_alias_keeps_its_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scaler = internals.cuda.amp.GradScaler(init_scale=8.0, growth_factor=4.0, growth_interval=3)
        with pytest.raises(AssertionError, match="growth factor"):
            internals.cuda.amp.GradScaler(growth_factor=0.5)
    assert scaler._device == "cuda"
    assert (scaler._init_scale, scaler._growth_factor, scaler._growth_interval) == (8.0, 4.0, 3)


def test_autocast_alias_enters_cuda_autocast_in_float16():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        region = internals.cuda.amp.autocast()
    assert (region.device_type, region.dtype) == ("cuda", internals.float16)
    with region:
        assert is_autocast_enabled("cuda")
    assert not is_autocast_enabled("cuda")
