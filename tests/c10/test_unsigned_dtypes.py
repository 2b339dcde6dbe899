"""uint16, uint32 and uint64 against torch: the dtype objects, ``iinfo``, promotion, and the
limited support torch gives their tensors.

torch makes, casts, copies, fills, views, indexes, prints and sorts such tensors, and computes
only ==, !=, *, &, |, ^ in them (plus sums, products and scans, which count in int64, and what
converts to float first: division, square roots); they promote with a float (the float wins) and
with nothing else. Every other kernel raises NotImplementedError, and internals refuses the same
ones, by the kernel's name where the refusal sits outside TensorIterator.
"""
import io
import pickle

import pytest
import torch
from helpers import outcome

import internals

NAMES = ["uint16", "uint32", "uint64"]


def test_the_dtype_objects():
    for name in NAMES:
        ours, theirs = getattr(internals, name), getattr(torch, name)
        assert (ours.itemsize, ours.is_signed, ours.is_floating_point, ours.is_complex) == (
            theirs.itemsize, theirs.is_signed, theirs.is_floating_point, theirs.is_complex)
        assert repr(ours).replace("internals.", "torch.") == repr(theirs)
        assert repr(internals.iinfo(ours)) == repr(torch.iinfo(theirs))
        info, expected = internals.iinfo(ours), torch.iinfo(theirs)
        assert (info.min, info.max, info.bits) == (expected.min, expected.max, expected.bits)
        assert pickle.loads(pickle.dumps(ours)) is ours and ours.to_real() is ours


def _same(program, name):
    """``program(lib, dtype)`` gives torch's result (compared as printed: values and dtype), or
    raises torch's exception class (the message may name a different kernel)."""
    ours, theirs = (outcome(lambda lib: _printed(program(lib, getattr(lib, name))), lib) for lib in (internals, torch))
    if isinstance(theirs, tuple) and theirs[:1] == ("error",):
        assert ours[:2] == theirs[:2], (ours, theirs)
    else:
        assert ours == theirs


def _printed(value):
    return " ".join(repr(value).replace("internals", "torch").split())


def _x(lib, u):
    return lib.tensor([1, 2, 3], dtype=u)


def _y(lib, u):
    return lib.tensor([3, 2, 1], dtype=u)


SUPPORTED = {
    "factories": lambda lib, u: (lib.zeros(2, dtype=u), lib.ones(2, dtype=u), lib.full((2,), 5, dtype=u),
                                 lib.zeros_like(_x(lib, u)), lib.empty(2, dtype=u).shape),
    "wrapping_creation": lambda lib, u: (lib.full((1,), -1, dtype=u), lib.tensor([lib.iinfo(u).max], dtype=u)),
    "casts": lambda lib, u: (_x(lib, u).to(lib.float32), _x(lib, u).to(lib.int64), lib.tensor([-1, 5]).to(u),
                             lib.tensor([1.5, -1.0, 70000.0]).to(u), lib.tensor([-1], dtype=lib.int32).view(u)),
    "indexing": lambda lib, u: (_x(lib, u)[1], _x(lib, u)[1:], _x(lib, u)[lib.tensor([0, 2])],
                                _x(lib, u)[lib.tensor([True, False, True])], _x(lib, u).reshape(3, 1).t().contiguous()),
    "setitem_and_fill": lambda lib, u: (_set(_x(lib, u)), _x(lib, u).clone().fill_(7)),
    "equality": lambda lib, u: (_x(lib, u) == _y(lib, u), _x(lib, u) != 2, lib.equal(_x(lib, u), _x(lib, u)),
                                _x(lib, u).any(), _x(lib, u).all()),
    "product_and_bits": lambda lib, u: (_x(lib, u) * _y(lib, u), _x(lib, u) * 3, _x(lib, u) & _y(lib, u),
                                        _x(lib, u) | 4, _x(lib, u) ^ _y(lib, u)),
    "wider_results": lambda lib, u: (_x(lib, u).sum(), _x(lib, u).prod(), _x(lib, u).cumsum(0), _x(lib, u) / 2,
                                     _x(lib, u).sqrt(), _x(lib, u) * 0.5, _x(lib, u) + lib.ones(3)),
    "data_movement": lambda lib, u: (lib.cat([_x(lib, u), _y(lib, u)]), lib.stack([_x(lib, u), _y(lib, u)]),
                                     _y(lib, u).sort(), lib.unique(_y(lib, u)), _x(lib, u).tolist(),
                                     _x(lib, u)[0].item(),
                                     lib.where(lib.tensor([True, False, True]), _x(lib, u), _y(lib, u))),
}


def _set(t):
    t[0] = 9
    return t


REFUSED = {
    "add": lambda lib, u: _x(lib, u) + _y(lib, u),
    "sub_scalar": lambda lib, u: _x(lib, u) - 1,
    "neg": lambda lib, u: -_x(lib, u),
    "lt": lambda lib, u: _x(lib, u) < _y(lib, u),
    "max": lambda lib, u: _x(lib, u).max(),
    "bitwise_not": lambda lib, u: ~_x(lib, u),
    "arange": lambda lib, u: lib.arange(3, dtype=u),
    "flip": lambda lib, u: _x(lib, u).flip(0),
    "gather": lambda lib, u: _x(lib, u).gather(0, lib.tensor([0])),
    "index_select": lambda lib, u: _x(lib, u).index_select(0, lib.tensor([0])),
    "index_put": lambda lib, u: _x(lib, u).index_put_((lib.tensor([0]),), _y(lib, u)[:1]),
    "masked_fill": lambda lib, u: _x(lib, u).masked_fill(lib.tensor([True, False, True]), 0),
    "mm": lambda lib, u: lib.mm(_x(lib, u).reshape(3, 1), _y(lib, u).reshape(1, 3)),
    "nonzero": lambda lib, u: _x(lib, u).nonzero(),
    "topk": lambda lib, u: _x(lib, u).topk(1),
    "tril": lambda lib, u: _x(lib, u).reshape(3, 1).tril(),
    "randperm": lambda lib, u: lib.randperm(3, dtype=u),
    "promote_with_int64": lambda lib, u: _x(lib, u) + lib.tensor([1]),
    "promote_with_bool": lambda lib, u: lib.promote_types(u, lib.bool),
    "promote_with_uint8": lambda lib, u: _x(lib, u) * lib.tensor([1], dtype=lib.uint8),
    "fill_out_of_range": lambda lib, u: lib.full((1,), lib.iinfo(u).max + 1, dtype=u),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", SUPPORTED)
def test_what_torch_supports_works_as_torchs(case, name):
    _same(SUPPORTED[case], name)


@pytest.mark.parametrize("case", REFUSED)
def test_what_torch_refuses_raises_torchs_class(case):
    for name in NAMES:
        _same(REFUSED[case], name)


@pytest.mark.parametrize("data", [[2**64 - 1, 2**63, 5], [-1], [2**64]])
def test_uint64_tensors_take_python_ints_as_unsigned(data):
    _same(lambda lib, u: lib.tensor(data, dtype=u), "uint64")


def test_uint64_arithmetic_wraps_and_reads_back_unsigned():
    def program(lib, u):
        return (lib.tensor([2**63], dtype=u) * 2, lib.full((1,), 2**64 - 1, dtype=u).tolist(),
                lib.tensor([2**64 - 1, 1], dtype=u).to(lib.float64), lib.tensor([2**63, 1], dtype=u).cumsum(0))
    _same(program, "uint64")


def test_interop_keeps_the_dtype():
    t = torch.tensor([65535, 1], dtype=torch.uint16)
    ours = internals.from_torch(t)
    assert ours.dtype is internals.uint16 and ours.tolist() == t.tolist()
    assert ours.to_torch().dtype is torch.uint16


@pytest.mark.parametrize("saver", ["internals", "torch"])
def test_saved_tensors_load_in_either_library(saver):
    """No legacy storage class holds these dtypes: they are saved as bytes beside the dtype."""
    libs = {"internals": internals, "torch": torch}
    lib, other = libs[saver], libs["torch" if saver == "internals" else "internals"]
    buffer = io.BytesIO()
    lib.save(lib.tensor([1, 2**64 - 1], dtype=lib.uint64)[1:], buffer)
    for reader in (lib, other):
        buffer.seek(0)
        loaded = reader.load(buffer)
        assert (loaded.dtype is reader.uint64, loaded.tolist(), loaded.storage_offset()) == (True, [2**64 - 1], 1)
