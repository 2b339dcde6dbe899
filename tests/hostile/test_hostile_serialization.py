"""save and load: what each library writes and what it refuses to read.

Each case differed from torch 2.13 before it was fixed."""
import copy
import io
import pickle

import pytest
import torch
from helpers import assert_same, same_error

import internals


# ----------------------------------------------------------------------------- save
def test_save_refuses_one_storage_seen_as_two_dtypes():
    def run(L):
        x = L.arange(4, dtype=L.int32)
        L.save([x, x.view(L.float32)], io.BytesIO())
    same_error(run)


def test_save_names_what_it_can_write_to():
    same_error(lambda L: L.save(L.ones(1), 3))


# ----------------------------------------------------------------------------- save / load
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_tensors_are_saved_and_loaded_by_both(dtype):
    """The pickle names ``torch.ComplexFloatStorage``; internals raised KeyError."""
    ours = internals.tensor([1 + 2j, -3j], dtype=getattr(internals, dtype))
    buf = io.BytesIO()
    internals.save([ours, ours[1:]], buf)
    buf.seek(0)
    a, b = torch.load(buf)
    assert_same(ours, a)
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    buf = io.BytesIO()
    torch.save(a, buf)
    buf.seek(0)
    assert_same(internals.load(buf), a)


@pytest.mark.parametrize("data", [b"garbage", b"", b"\x80", b"\x80\x02", b"PK\x03\x04junk"])
def test_load_of_what_is_no_checkpoint_raises_as_torch(data):
    """internals let zipfile's BadZipFile out; torch reads a non-zip file as its legacy format
    (an unpickling error, or EOFError when it ends at once) and names a broken zip archive."""
    same_error(lambda L: L.load(io.BytesIO(data)))


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_load_of_a_plain_pickle_raises_as_torch(protocol):
    """A pickle that is no checkpoint: protocol 2 reaches the legacy format's magic number check
    (RuntimeError); from protocol 4 on, its FRAME opcode is one torch's weights-only unpickler
    refuses (UnpicklingError), where internals read on to the magic number."""
    data = pickle.dumps({"a": 1}, protocol=protocol)
    same_error(lambda L: L.load(io.BytesIO(data)))


# ----------------------------------------------------------------------------- storages saved alone
def _saved(L, obj):
    buffer = io.BytesIO()
    L.save(obj, buffer)
    buffer.seek(0)
    return L.load(buffer)


def _describe(storage):
    return type(storage).__name__, str(storage.dtype).split(".")[-1], storage.size(), storage.tolist()


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "float16", "complex64"])
@pytest.mark.parametrize("make", [lambda x: x.untyped_storage(), lambda x: x.storage(),
                                  lambda x: x.untyped_storage()[2:6], lambda x: x[1:].storage()])
@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_a_bare_storage_saves_and_loads_as_a_typed_storage(dtype, make):
    """torch writes an UntypedStorage as ``torch.storage.UntypedStorage`` with its bytes, a
    TypedStorage under its legacy class; both load as TypedStorage (uint8 for the untyped one).
    internals pickled them by a global of its own, which its own load refused."""
    theirs = _describe(_saved(torch, make(torch.arange(5).to(getattr(torch, dtype)))))
    ours = _describe(_saved(internals, make(internals.arange(5).to(getattr(internals, dtype)))))
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("writer, reader", [(internals, torch), (torch, internals)])
def test_a_bare_storage_crosses_between_the_libraries(writer, reader):
    x, y = writer.arange(5.), writer.arange(5.)
    buffer = io.BytesIO()
    writer.save({"bytes": y.untyped_storage(), "typed": x.storage(), "view": x[1:]}, buffer)
    buffer.seek(0)
    loaded = reader.load(buffer)
    assert loaded["bytes"].tolist() == list(y.numpy().tobytes())
    assert loaded["typed"].tolist() == [0., 1., 2., 3., 4.]
    assert loaded["view"].tolist() == [1., 2., 3., 4.]


@pytest.mark.parametrize("objects", [
    lambda L, x: [x.untyped_storage(), x],                  # uint8 bytes and float elements of one memory
    lambda L, x: [x.untyped_storage()[0:8], x.storage()],   # a slice of the bytes at the same address
    lambda L, x: [x.storage(), x.view(L.int32)],
])
def test_one_memory_saved_as_two_dtypes_is_refused(objects):
    same_error(lambda L: _saved(L, objects(L, L.arange(5.))))


def _defined_inside_a_function():
    class Local:
        pass
    return {"class": Local, "function": lambda: 1}


@pytest.mark.parametrize("kind", ["class", "function"])
def test_saving_an_object_defined_inside_a_function_raises_as_torch(kind):
    """torch's pickler lets the lookup's AttributeError through, naming the local object."""
    same_error(lambda lib: lib.save({"x": _defined_inside_a_function()[kind]}, io.BytesIO()))


@pytest.mark.parametrize("protocol", [2, 3])
def test_save_takes_torchs_pickle_protocol_argument(protocol):
    """``pickle_protocol`` was refused as an unknown keyword; the archive it writes loads in torch."""
    buffer = io.BytesIO()
    internals.save({"w": internals.arange(3.0)}, buffer, pickle_protocol=protocol)
    assert torch.load(io.BytesIO(buffer.getvalue()))["w"].tolist() == [0.0, 1.0, 2.0]


# ----------------------------------------------------------------------------- type info objects
@pytest.mark.parametrize("make", [lambda L: L.finfo(L.float32), lambda L: L.iinfo(L.int16)])
@pytest.mark.parametrize("how", [pickle.dumps, copy.copy, copy.deepcopy])
def test_finfo_and_iinfo_refuse_pickle_and_copy(make, how):
    """torch's finfo and iinfo have no pickle support (TypeError); internals pickled them."""
    same_error(lambda L: how(make(L)))
