"""``nn.Sequential`` edited the ways tutorials edit it (indexing, slicing, assignment, deletion,
append, insert, extend, pop, ``+``, ``*``, iteration, ``named_children``), compared with torch:
the children's types, names and reprs, and the errors' classes and messages."""
from collections import OrderedDict

import pytest
import torch

import internals


def build(nn):
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.Sigmoid())


EDITS = {
    "index": lambda nn, s: s[-2],
    "slice": lambda nn, s: s[1:3],
    "slice_step": lambda nn, s: s[::-2],
    "setitem": lambda nn, s: s.__setitem__(-1, nn.Tanh()),
    "delitem": lambda nn, s: s.__delitem__(1),
    "delitem_slice": lambda nn, s: s.__delitem__(slice(0, 3, 2)),
    "append": lambda nn, s: s.append(nn.Tanh()),
    "insert": lambda nn, s: s.insert(1, nn.Dropout(0.2)),
    "insert_negative": lambda nn, s: s.insert(-1, nn.Identity()),
    "insert_end": lambda nn, s: s.insert(4, nn.Identity()),
    "extend": lambda nn, s: s.extend([nn.ReLU(), nn.Linear(1, 1)]),
    "pop": lambda nn, s: s.pop(0),
    "add": lambda nn, s: s + nn.Sequential(nn.ReLU()),
    "iadd": lambda nn, s: s.__iadd__(nn.Sequential(nn.ReLU())),
    "mul": lambda nn, s: s * 2,
    "rmul": lambda nn, s: 2 * s,
    "imul": lambda nn, s: s.__imul__(2),
    "named": lambda nn, s: nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())])).__delitem__(0),
}


def describe(value):
    if isinstance(value, (torch.nn.Module, internals.nn.Module)):
        return repr(value), [n for n, _ in value.named_children()], [n for n, _ in value.named_parameters()]
    return value


@pytest.mark.parametrize("edit", EDITS)
def test_edits_match_torch(edit):
    results = []
    for nn in (internals.nn, torch.nn):
        torch.manual_seed(0)
        s = build(nn)
        out = EDITS[edit](nn, s)
        results.append((describe(s), describe(out), len(s), [type(m).__name__ for m in s]))
    assert results[0] == results[1]


@pytest.mark.parametrize("bad", [
    lambda nn, s: s[4],
    lambda nn, s: s[-5],
    lambda nn, s: s + nn.ReLU(),
    lambda nn, s: s * 0,
    lambda nn, s: s * 1.5,
    lambda nn, s: s.insert(6, nn.ReLU()),
    lambda nn, s: s.insert(0, 3),
], ids=["index", "negative_index", "add_module", "mul_zero", "mul_float", "insert_range", "insert_type"])
def test_errors_match_torch(bad):
    caught = []
    for nn in (internals.nn, torch.nn):
        with pytest.raises(Exception) as info:
            bad(nn, build(nn))
        caught.append((type(info.value).__name__, str(info.value).replace("internals", "torch")))
    assert caught[0] == caught[1]
