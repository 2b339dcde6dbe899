"""uint16, uint32 and uint64 against torch: the dtype objects, ``iinfo``, promotion, and the
limited support torch gives their tensors.

torch makes, casts, copies, fills, views, indexes, prints and sorts such tensors, and computes
only ==, !=, *, &, |, ^ in them (plus sums, products and scans, which count in int64, and what
converts to float first: division, square roots); they promote with a float (the float wins) and
with nothing else. Every other kernel raises NotImplementedError, and internals refuses the same
ones, with torch's message, which names torch's kernel (or its dispatch stub: ``add_stub``).
"""
import io
import pickle

import numpy as np
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
    raises torch's exception class with torch's message."""
    ours, theirs = (outcome(lambda lib: _printed(program(lib, getattr(lib, name))), lib) for lib in (internals, torch))
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
    "sub": lambda lib, u: _x(lib, u) - _y(lib, u),
    "in_place_add": lambda lib, u: _x(lib, u).add_(1),
    "floor_divide": lambda lib, u: _x(lib, u) // _y(lib, u),
    "div_trunc": lambda lib, u: lib.div(_x(lib, u), _y(lib, u), rounding_mode="trunc"),
    "remainder": lambda lib, u: _x(lib, u) % 2,
    "pow": lambda lib, u: _x(lib, u) ** 2,
    "square": lambda lib, u: _x(lib, u).square(),
    "abs": lambda lib, u: _x(lib, u).abs(),
    "sgn": lambda lib, u: _x(lib, u).sgn(),
    "ge_scalar": lambda lib, u: _x(lib, u) >= 2,
    "maximum": lambda lib, u: lib.maximum(_x(lib, u), _y(lib, u)),
    "fmax": lambda lib, u: lib.fmax(_x(lib, u), _y(lib, u)),
    "clamp": lambda lib, u: _x(lib, u).clamp(0, 2),
    "clamp_min": lambda lib, u: _x(lib, u).clamp(min=1),
    "clamp_max": lambda lib, u: _x(lib, u).clamp(max=1),
    "clamp_tensors": lambda lib, u: _x(lib, u).clamp(_y(lib, u), _y(lib, u)),
    "relu": lambda lib, u: lib.relu(_x(lib, u)),
    "shifts": lambda lib, u: _x(lib, u) << _y(lib, u),
    "min": lambda lib, u: _x(lib, u).min(),
    "max_dim": lambda lib, u: _x(lib, u).max(0),
    "amin": lambda lib, u: _x(lib, u).amin(),
    "argmax": lambda lib, u: _x(lib, u).argmax(),
    "aminmax": lambda lib, u: lib.aminmax(_x(lib, u)),
    "logical_and": lambda lib, u: lib.logical_and(_x(lib, u), _y(lib, u)),
    "count_nonzero": lambda lib, u: _x(lib, u).count_nonzero(),
    "searchsorted": lambda lib, u: lib.searchsorted(_x(lib, u), _y(lib, u)),
    "cummax": lambda lib, u: _x(lib, u).cummax(0),
    "cummin": lambda lib, u: _x(lib, u).cummin(0),
    "median": lambda lib, u: _x(lib, u).median(),
    "mode": lambda lib, u: _x(lib, u).mode(),
    "kthvalue": lambda lib, u: _x(lib, u).kthvalue(1),
    "bincount": lambda lib, u: _x(lib, u).bincount(),
    "put": lambda lib, u: _x(lib, u).put(lib.tensor([0]), _y(lib, u)[:1]),
    "isin": lambda lib, u: lib.isin(_x(lib, u), _y(lib, u)),
}

# torch rounds an integer tensor by copying it, which these dtypes allow
SUPPORTED["rounding"] = lambda lib, u: (_x(lib, u).floor(), _x(lib, u).ceil(), _x(lib, u).trunc(), _x(lib, u).round())


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


UINT64_EDGES = {
    # ``store_scalar`` unpacks a uint64 from a Python int only
    "a_float_among_the_values": lambda lib, u: lib.tensor([1.5, 2**63], dtype=u),
    "a_float": lambda lib, u: lib.tensor(1.5, dtype=u),
    "a_whole_float": lambda lib, u: lib.tensor([1, 2.0], dtype=u),
    "a_complex": lambda lib, u: lib.tensor([1j], dtype=u),
    "a_numpy_integer": lambda lib, u: lib.tensor(np.uint64(7), dtype=u),
    "a_numpy_uint64_inferred": lambda lib, u: lib.tensor([np.uint64(7)]),
    "a_tensor_among_the_values": lambda lib, u: lib.tensor([lib.tensor(1.5)], dtype=u),
    "bools": lambda lib, u: lib.tensor([True, False], dtype=u),
    # an array is copied, not unpacked value by value
    "a_float_array": lambda lib, u: lib.tensor(np.array([1.5, 7.0]), dtype=u),
    # a negative int64 assigned wraps; a float assigned is truncated
    "assigned_negative": lambda lib, u: _set_value(lib.zeros(2, dtype=u), -1),
    "assigned_float": lambda lib, u: _set_value(lib.zeros(2, dtype=u), 2.5),
    "assigned_too_large": lambda lib, u: _set_value(lib.zeros(2, dtype=u), 2**64),
    # read back as an int64 by int(), bool() and an index; as a double by float(); as itself by item()
    "int_above_int64": lambda lib, u: int(lib.tensor(2**63, dtype=u)),
    "bool_above_int64": lambda lib, u: bool(lib.tensor(2**63, dtype=u)),
    "index_above_int64": lambda lib, u: [1][lib.tensor(2**63, dtype=u)],
    "int_within_int64": lambda lib, u: (int(lib.tensor(2**40, dtype=u)), bool(lib.tensor(3, dtype=u))),
    "float_and_item": lambda lib, u: (float(lib.tensor(2**64 - 1, dtype=u)), lib.tensor(2**63 + 5, dtype=u).item()),
    "fill_and_full": lambda lib, u: (lib.zeros(2, dtype=u).fill_(2**63), lib.full((2,), 2**64 - 1, dtype=u)),
    "full_too_large": lambda lib, u: lib.full((2,), 2**64, dtype=u),
    "equal_to_a_large_number": lambda lib, u: lib.tensor([2**63], dtype=u) == 2**63,
    "sorted_and_unique": lambda lib, u: (lib.tensor([2**63, 1, 2**64 - 1], dtype=u).sort()[0],
                                         lib.unique(lib.tensor([2**63, 1, 2**63], dtype=u))),
    "viewed_as_int64": lambda lib, u: lib.tensor([2**64 - 1], dtype=u).view(lib.int64),
}


def _set_value(t, value):
    t[0] = value
    return t


@pytest.mark.parametrize("case", UINT64_EDGES)
def test_uint64_edge_cases(case):
    _same(UINT64_EDGES[case], "uint64")


@pytest.mark.parametrize("name", ["uint8", "int32", "int64"])
def test_other_integer_types_read_a_numpy_float_or_a_float_tensor_as_an_index(name):
    """A Python float is truncated into them; a NumPy float or a floating tensor among the values
    is read through ``__index__``, which refuses it."""
    for program in (lambda lib, u: lib.tensor([1.5], dtype=u), lambda lib, u: lib.tensor(np.float32(7), dtype=u),
                    lambda lib, u: lib.tensor([lib.tensor(1.5)], dtype=u),
                    lambda lib, u: lib.tensor([lib.tensor(2)], dtype=u)):
        _same(program, name)


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
