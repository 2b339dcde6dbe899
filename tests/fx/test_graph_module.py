"""``GraphModule.to_folder`` against torch.fx's: the package written imports, rebuilds the module
with the same children, parameters and buffers, and computes what the traced module computes."""
import importlib
import sys

import pytest
import torch
from helpers import fx_text

import internals


def _traced(L):
    class Shifted(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 2)
            self.w = L.nn.Parameter(L.tensor([0.5, -1.5]))
            self.register_buffer("b", L.tensor([1.0, 2.0]))

        def forward(self, x):
            return L.relu(self.lin(x)) * self.w + self.b
    L.manual_seed(0)
    return L.fx.symbolic_trace(Shifted())


def test_to_folder_writes_an_importable_package(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    logs = []
    for L in (internals, torch):
        gm = _traced(L)
        folder = tmp_path / f"saved_{L.__name__}"
        gm.to_folder(folder, "Saved")
        source = (folder / "module.py").read_text()
        saved = importlib.import_module(folder.name).Saved()
        x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        init = fx_text(source, L).split("def forward")[0].split("\n")
        init = [line.strip() for line in init if line.startswith(" " * 8) and "state_dict.pt" not in line]
        logs.append((init, sorted(saved.state_dict()), saved(x).flatten().tolist(), gm(x).flatten().tolist()))
        sys.modules.pop(folder.name, None)
        sys.modules.pop(f"{folder.name}.module", None)
    assert logs[0][:2] == logs[1][:2]           # the same __init__ lines but the path, the same state
    assert logs[0][2] == logs[0][3]             # the package computes what the traced module does
    assert logs[0][2] == pytest.approx(logs[1][2], rel=1e-6)


def test_to_folder_refuses_a_child_it_cannot_write(tmp_path):
    """torch pickles such a child whole; ``internals.load`` reads tensors only, so it is refused
    before anything is written."""
    gm = internals.fx.symbolic_trace(internals.nn.Sequential(internals.nn.ReLU()))
    with pytest.raises(NotImplementedError, match="ReLU"):
        gm.to_folder(tmp_path / "never_written")
    assert not (tmp_path / "never_written").exists()
