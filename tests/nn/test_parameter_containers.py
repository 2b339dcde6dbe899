"""``nn.ParameterList`` and ``nn.ParameterDict`` against torch: registration (tensors become
Parameters, other objects plain attributes), indexing and slicing, the dict methods and their
orders, state dicts, reprs, the errors."""
from collections import OrderedDict

import pytest
import torch

import internals


def _describe(container):
    """What a reader sees of a container, as plain values."""
    entries = container.items() if hasattr(container, "items") else enumerate(container)
    return ([(k, type(v).__name__, tuple(v.shape) if hasattr(v, "shape") else v) for k, v in entries],
            [(n, tuple(p.shape), p.requires_grad) for n, p in container.named_parameters()],
            list(container.state_dict()), repr(container).replace("internals", "torch"), len(container))


LISTS = {
    "tensors_and_objects": lambda L: L.nn.ParameterList([L.ones(2, 3), L.nn.Parameter(L.zeros(4)), "s", None]),
    "append_extend_iadd": lambda L: _grown(L.nn.ParameterList(), L),
    "slice": lambda L: L.nn.ParameterList([L.ones(1), L.ones(2), L.ones(3), L.ones(4)])[1::2],
    "negative_index_set": lambda L: _set(L.nn.ParameterList([L.ones(1), L.ones(2)]), -1, L.zeros(5)),
    "frozen_parameter": lambda L: L.nn.ParameterList([L.nn.Parameter(L.ones(2), requires_grad=False)]),
    "empty": lambda L: L.nn.ParameterList(),
}


def _grown(plist, L):
    plist.append(L.ones(2))
    plist.extend([L.zeros(3), 1.5])
    plist += (L.ones(1, 1),)
    return plist


def _set(container, key, value):
    container[key] = value
    return container


@pytest.mark.parametrize("name", list(LISTS))
def test_parameter_list_matches_torch(name):
    assert _describe(LISTS[name](internals)) == _describe(LISTS[name](torch))


DICTS = {
    "sorted_from_a_dict": lambda L: L.nn.ParameterDict({"b": L.ones(2), "a": L.nn.Parameter(L.zeros(3)), "c": 1.5}),
    "ordered_dict_keeps_order": lambda L: L.nn.ParameterDict(OrderedDict([("b", L.ones(2)), ("a", L.zeros(1))])),
    "pairs": lambda L: L.nn.ParameterDict([("x", L.ones(1)), ("w", L.ones(2))]),
    "setdefault_pop_del": lambda L: _edited(L.nn.ParameterDict({"a": L.ones(1), "b": L.ones(2), "c": L.ones(3)}), L),
    "popitem": lambda L: _popped(L.nn.ParameterDict({"a": L.ones(1), "b": L.ones(2)})),
    "union": lambda L: L.nn.ParameterDict({"a": L.ones(1)}) | L.nn.ParameterDict({"b": L.ones(2), "a": L.ones(3)}),
    "in_place_union": lambda L: _ior(L.nn.ParameterDict({"a": L.ones(1)}), L.nn.ParameterDict({"z": L.ones(2)})),
    "fromkeys_and_copy": lambda L: L.nn.ParameterDict({"q": L.ones(1)}).fromkeys(["x", "y"], L.ones(2)).copy(),
    "clear": lambda L: _cleared(L.nn.ParameterDict({"a": L.ones(1)})),
}


def _edited(pdict, L):
    pdict.setdefault("d", L.zeros(4))
    pdict.setdefault("a", L.zeros(9))       # present: kept
    pdict.pop("b")
    del pdict["c"]
    assert pdict.get("b", 7) == 7 and "a" in pdict and list(reversed(pdict)) == ["d", "a"]
    return pdict


def _popped(pdict):
    key, value = pdict.popitem()
    assert key == "b" and tuple(value.shape) == (2,)
    return pdict


def _ior(pdict, other):
    pdict |= other
    return pdict


def _cleared(pdict):
    pdict.clear()
    return pdict


@pytest.mark.parametrize("name", list(DICTS))
def test_parameter_dict_matches_torch(name):
    assert _describe(DICTS[name](internals)) == _describe(DICTS[name](torch))


ERRORS = {
    "list_index": lambda L: L.nn.ParameterList([L.ones(1)])[3],
    "list_call": lambda L: L.nn.ParameterList()(),
    "list_extend_tensor": lambda L: L.nn.ParameterList().extend(L.ones(2)),
    "list_extend_int": lambda L: L.nn.ParameterList().extend(3),
    "dict_key": lambda L: L.nn.ParameterDict()[3],
    "dict_missing": lambda L: L.nn.ParameterDict()["a"],
    "dict_call": lambda L: L.nn.ParameterDict()(1),
    "dict_update_int": lambda L: L.nn.ParameterDict().update(3),
    "dict_update_bad_pair": lambda L: L.nn.ParameterDict().update([("a", L.ones(1), 1)]),
    "dict_update_not_pairs": lambda L: L.nn.ParameterDict().update([1]),
    "dict_popitem_empty": lambda L: L.nn.ParameterDict().popitem(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](internals)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value).replace("internals", "torch") == str(theirs.value)


def test_parameters_train_in_a_model_and_load_across_libraries():
    class Model:
        def __new__(cls, L):
            class M(L.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scales = L.nn.ParameterList([L.ones(3) * (i + 1) for i in range(2)])
                    self.shifts = L.nn.ParameterDict({"a": L.zeros(3), "b": L.ones(3)})

                def forward(self, x):
                    return x * self.scales[0] * self.scales[-1] + self.shifts["a"] - self.shifts["b"]
            return M()
    theirs, ours = Model(torch), Model(internals)
    ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
    for lib, model in ((torch, theirs), (internals, ours)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            (model(lib.arange(3.0) + step) ** 2).sum().backward()
            opt.step()
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].tolist() == pytest.approx(value.tolist(), abs=1e-6)
