"""``GraphModule.to_folder`` against torch.fx's: the package written imports, rebuilds the module
with the same children (written as their repr, or pickled), parameters and buffers, and computes
what the traced module computes."""
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


class Halved(internals.nn.Module):
    """A child of the test's own class: to_folder pickles it (its class found again by name)."""

    def forward(self, x):
        return x / 2


class TorchHalved(torch.nn.Module):
    def forward(self, x):
        return x / 2


def _with_pickled_children(L, halved):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.LayerNorm(4), L.nn.ReLU(),
                            L.nn.Sequential(L.nn.Linear(4, 2), L.nn.Tanh()), halved())
    return L.fx.symbolic_trace(model)


def test_to_folder_pickles_the_children_a_repr_cannot_rebuild(tmp_path, monkeypatch):
    """torch's rule: Linear, Conv and BatchNorm are written as their repr; any other child
    (LayerNorm, ReLU, a Sequential, a class of one's own) is saved whole to ``<name>.pt`` and
    loaded back in the module's ``__init__``, with a warning naming them."""
    monkeypatch.syspath_prepend(str(tmp_path))
    logs = []
    for L, halved in ((internals, Halved), (torch, TorchHalved)):
        gm = _with_pickled_children(L, halved)
        folder = tmp_path / f"pickled_{L.__name__}"
        with pytest.warns(UserWarning) as caught:
            gm.to_folder(folder, "Saved")
        saved = importlib.import_module(folder.name).Saved()
        x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        files = sorted(p.name for p in folder.iterdir() if p.suffix == ".pt")
        logs.append(([str(w.message) for w in caught], files, [type(m).__name__ for m in saved.children()],
                     saved(x).flatten().tolist(), gm(x).flatten().tolist()))
        sys.modules.pop(folder.name, None)
        sys.modules.pop(f"{folder.name}.module", None)
    assert logs[0][:2] == logs[1][:2]           # the same children pickled, the same warning
    assert logs[0][2] == [n.replace("TorchHalved", "Halved") for n in logs[1][2]]
    assert logs[0][3] == logs[0][4]             # the package computes what the traced module does
    assert logs[0][3] == pytest.approx(logs[1][3], rel=1e-5)


def _traced_with_methods(L):
    """Calls by method and operator only: a graph whose targets pickle by name in both libraries
    (the package's generated functions, ``internals.relu``, do not pickle by name yet)."""
    class Shifted(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 2)
            self.w = L.nn.Parameter(L.tensor([0.5, -1.5]))
            self.register_buffer("b", L.tensor([1.0, 2.0]))

        def forward(self, x):
            return self.lin(x).relu() * self.w + self.b
    L.manual_seed(0)
    return L.fx.symbolic_trace(Shifted())


def test_a_graph_module_pickles_and_loads_as_torchs():
    """pickle keeps the class name, the children, parameters and buffers, and the code (compiled
    again on load: fx's ``reduce_graph_module``)."""
    import copy
    import pickle
    results = []
    for L in (internals, torch):
        gm = _traced_with_methods(L)
        again, copied = pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)
        x = L.tensor([[0.25, -1.0, 2.0]])
        results.append([(type(m).__name__, fx_text(m.code, L), sorted(m.state_dict()), m(x).tolist())
                        for m in (again, copied)])
    assert results[0] == results[1]
