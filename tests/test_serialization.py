"""internals.save / internals.load against torch.save / torch.load: files cross both ways, views
keep sharing one storage with their offsets, state_dicts round-trip."""
import io
import pickle
import zipfile

import pytest
import torch
from helpers import assert_same, assert_same_error, both_with_warnings

import internals

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_internals_file_loads_in_torch(tmp_path, dtype):
    x = internals.arange(12).reshape(3, 4).to(getattr(internals, dtype))
    internals.save({"x": x, "view": x[1:, 1:], "t": x.t(), "n": 3, "s": "text"}, tmp_path / "a.pt")
    got = torch.load(tmp_path / "a.pt")
    assert_same(x, got["x"])
    assert_same(x[1:, 1:], got["view"])
    assert_same(x.t(), got["t"])
    assert got["view"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    assert (got["n"], got["s"]) == (3, "text")


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_file_loads_in_internals(tmp_path, dtype):
    x = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    torch.save([x, x[:, 1::2], (x.t(),)], tmp_path / "b.pt")
    got = internals.load(tmp_path / "b.pt")
    assert_same(got[0], x)
    assert_same(got[1], x[:, 1::2])
    assert_same(got[2][0], x.t())
    got[0].fill_(1)          # the views share the loaded storage
    assert_same(got[1], torch.ones(3, 2, dtype=x.dtype), exact_layout=False)


def test_state_dicts_round_trip(tmp_path):
    internals.manual_seed(0)
    torch.manual_seed(0)
    ours = internals.nn.Sequential(internals.nn.Linear(3, 4), internals.nn.ReLU(), internals.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    internals.save(ours.state_dict(), tmp_path / "ours.pt")
    theirs.load_state_dict(torch.load(tmp_path / "ours.pt"))
    for (k, v), (k2, v2) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert k == k2
        assert_same(v, v2)
    with torch.no_grad():
        theirs[0].weight.mul_(2)
    torch.save(theirs.state_dict(), tmp_path / "theirs.pt")
    ours.load_state_dict(internals.load(tmp_path / "theirs.pt"))
    assert_same(ours[0].weight.detach(), theirs[0].weight.detach())


def test_parameters_and_requires_grad(tmp_path):
    p = internals.nn.Parameter(internals.ones(2))
    x = internals.ones(3, requires_grad=True)
    internals.save([p, x], tmp_path / "p.pt")
    got = torch.load(tmp_path / "p.pt")
    assert isinstance(got[0], torch.nn.Parameter) and got[0].requires_grad and got[1].requires_grad
    torch.save([torch.nn.Parameter(torch.zeros(2))], tmp_path / "q.pt")
    back = internals.load(tmp_path / "q.pt")
    assert isinstance(back[0], internals.nn.Parameter) and back[0].requires_grad


def test_cuda_tensors_and_map_location(tmp_path):
    x = internals.arange(4.0, device="cuda")
    internals.save(x, tmp_path / "c.pt")
    with zipfile.ZipFile(tmp_path / "c.pt") as archive:
        assert b"cuda:0" in archive.read("archive/data.pkl")
    assert internals.load(tmp_path / "c.pt").device.type == "cuda"
    on_cpu = internals.load(tmp_path / "c.pt", map_location="cpu")
    assert_same(on_cpu, torch.arange(4.0))
    assert torch.equal(torch.load(tmp_path / "c.pt", map_location="cpu"), torch.arange(4.0))


def test_format_records(tmp_path):
    internals.save(internals.zeros(2), tmp_path / "f.pt")
    with zipfile.ZipFile(tmp_path / "f.pt") as archive:
        names = set(archive.namelist())
        assert {"archive/data.pkl", "archive/byteorder", "archive/version", "archive/data/0"} <= names
        assert archive.read("archive/byteorder") == b"little"
        assert all(i.compress_type == zipfile.ZIP_STORED for i in archive.infolist())


def test_load_refuses_other_globals(tmp_path):
    torch.save({"f": torch.nn.Linear}, tmp_path / "g.pt")
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        internals.load(tmp_path / "g.pt")


def _meta_views(lib):
    x = lib.arange(12.0).reshape(3, 4).t()
    return {"t": x, "slice": x[1:, ::2], "i": lib.arange(5)[1:], "h": lib.ones(2, dtype=lib.float16),
            "p": lib.nn.Parameter(lib.ones(2, 3, dtype=lib.float64)), "s": lib.tensor(2.5)}


def _meta_summary(loaded):
    return {k: (repr(v).replace("internals.", "torch."), v.device.type, v.is_meta, tuple(v.shape), v.stride(),
                v.storage_offset(), str(v.dtype).replace("internals.", "torch."), v.requires_grad, type(v).__name__)
            for k, v in loaded.items()}


@pytest.mark.parametrize("where", ["meta", "device", "dict"])
@pytest.mark.parametrize("writer", ["torch", "internals"])
def test_map_location_meta_gives_meta_tensors(tmp_path, where, writer):
    """Sizes, strides, offsets, dtypes and Parameter-ness as torch's; no values (repr shows '...')."""
    lib = torch if writer == "torch" else internals
    lib.save(_meta_views(lib), tmp_path / "m.pt")
    maps = {"meta": ("meta", "meta"), "device": (torch.device("meta"), internals.device("meta")),
            "dict": ({"cpu": "meta"}, {"cpu": "meta"})}[where]
    got = internals.load(tmp_path / "m.pt", map_location=maps[1])
    expected = torch.load(tmp_path / "m.pt", map_location=maps[0])
    assert _meta_summary(got) == _meta_summary(expected)
    assert all(v.is_meta for v in got.values())


@pytest.mark.parametrize("writer", ["torch", "internals"])
def test_map_location_function_moving_storages_to_meta(tmp_path, writer):
    """A ``map_location`` function that returns each storage's meta twin (torch's
    ``_get_restore_location`` calls it with the storage read on the CPU and its saved location):
    meta tensors with torch's sizes, strides, offsets, dtypes, storage sizes and Parameter-ness."""
    lib = torch if writer == "torch" else internals
    lib.save(_meta_views(lib), tmp_path / "m.pt")
    seen = {}

    def to_meta(L):
        def move(storage, location):
            seen.setdefault(L.__name__, []).append(location)
            return L.UntypedStorage(storage.nbytes(), device="meta")
        return move
    got = internals.load(tmp_path / "m.pt", map_location=to_meta(internals))
    expected = torch.load(tmp_path / "m.pt", map_location=to_meta(torch))
    assert _meta_summary(got) == _meta_summary(expected)
    assert all(v.is_meta for v in got.values())
    assert ({k: v.untyped_storage().nbytes() for k, v in got.items()}
            == {k: v.untyped_storage().nbytes() for k, v in expected.items()})
    assert set(seen["internals"]) == set(seen["torch"]) == {"cpu"}


def test_meta_storage_has_a_size_and_no_bytes():
    """``UntypedStorage(n, device="meta")``: its size, a null data pointer, and torch's error class
    for any read of its bytes (nothing is allocated, nothing can be read)."""
    for lib in (torch, internals):
        s = lib.UntypedStorage(8, device="meta")
        assert (s.nbytes(), s.data_ptr(), s.device.type) == (8, 0, "meta")
    for read in (lambda s: s[0], lambda s: s.tolist()):
        ours, theirs = assert_same_error(lambda read=read: read(internals.UntypedStorage(8, device="meta")),
                                         lambda read=read: read(torch.UntypedStorage(8, device="meta")))
        assert str(ours) == str(theirs)


def test_map_location_meta_reads_no_storage(tmp_path):
    """map_location='meta' reads no bytes, yet looks each record up (torch's _is_meta_location
    path takes its offset): records of other bytes load, a missing one is refused, by both."""
    torch.save({"w": torch.arange(4.0)}, tmp_path / "w.pt")
    with zipfile.ZipFile(tmp_path / "w.pt") as full, zipfile.ZipFile(tmp_path / "cut.pt", "w") as cut:
        for info in full.infolist():
            if not info.filename.endswith("/data/0"):
                cut.writestr(info, full.read(info))
    for lib in (torch, internals):
        got = lib.load(tmp_path / "w.pt", map_location="meta")["w"]
        assert (tuple(got.shape), got.stride(), got.is_meta) == ((4,), (1,), True)
        for where in ("meta", {"cpu": "meta"}):
            with pytest.raises(RuntimeError, match="failed locating file data/0"):
                lib.load(tmp_path / "cut.pt", map_location=where)


@pytest.mark.parametrize("reader", ["torch", "internals"])
def test_meta_tensors_save_and_stay_meta(tmp_path, reader):
    """A meta tensor is saved as its metadata alone (torch's _rebuild_meta_tensor_no_storage, the
    offset dropped) and loads on meta even with map_location='cpu'."""
    torch.save(_meta_views(torch), tmp_path / "src.pt")
    internals.save(internals.load(tmp_path / "src.pt", map_location="meta"), tmp_path / "again.pt")
    torch.save(torch.load(tmp_path / "src.pt", map_location="meta"), tmp_path / "torch_again.pt")
    assert not any("/data/" in n for n in zipfile.ZipFile(tmp_path / "again.pt").namelist())
    lib = torch if reader == "torch" else internals
    got = lib.load(tmp_path / "again.pt", map_location="cpu")
    assert _meta_summary(got) == _meta_summary(torch.load(tmp_path / "torch_again.pt", map_location="cpu"))
    assert all(v.is_meta for v in got.values())


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("extra", [{"pickle_protocol": 4}, {"errors": "strict"}, {"encoding": "latin1"}])
def test_load_checks_its_pickle_arguments_as_torch(tmp_path, weights_only, extra):
    """Keywords beyond torch.load's own go to the unpickler: the weights-only one takes only
    ``encoding`` (with a warning that they are ignored), pickle's Unpickler its own four; any
    other is a TypeError."""
    def run(lib):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(lib.arange(3), path)
        try:
            return lib.load(path, weights_only=weights_only, **extra).tolist()
        except TypeError as error:
            return str(error)
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(run)
    assert ours == theirs
    assert our_warnings == their_warnings


def _with_attributes(lib, kind):
    """A tensor or a parameter with Python attributes set on it."""
    t = lib.nn.Parameter(lib.ones(2)) if kind == "parameter" else lib.arange(3.0)
    t.note, t.extra = "kept", {"k": [1, 2]}
    return t


@pytest.mark.parametrize("kind", ["tensor", "parameter"])
@pytest.mark.parametrize("writer", ["torch", "internals"])
@pytest.mark.parametrize("reader", ["torch", "internals"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_python_attributes_on_tensors_survive_save(tmp_path, kind, writer, reader, weights_only):
    """Attributes set on a tensor travel in its pickle (``_rebuild_from_type_v2``, a parameter's
    in ``_rebuild_parameter_with_state``) and are set again on load, as torch does."""
    write, read = (torch if writer == "torch" else internals), (torch if reader == "torch" else internals)
    write.save(_with_attributes(write, kind), tmp_path / "t.pt")
    got = read.load(tmp_path / "t.pt", weights_only=weights_only)
    assert (type(got).__name__, got.tolist(), got.note, got.extra) == (
        "Parameter" if kind == "parameter" else "Tensor", _with_attributes(torch, kind).tolist(), "kept", {"k": [1, 2]})
    pickled = zipfile.ZipFile(tmp_path / "t.pt").read(next(
        n for n in zipfile.ZipFile(tmp_path / "t.pt").namelist() if n.endswith("data.pkl")))
    assert (b"_rebuild_parameter_with_state" if kind == "parameter" else b"_rebuild_from_type_v2") in pickled


def _pickle_with_persistent_id(lib, pid):
    """A file whose pickle hands ``pid`` to persistent_load."""
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return pid if obj == "marker" else None
    buffer = io.BytesIO()
    lib.save(lib.ones(1), buffer)
    data = io.BytesIO()
    Pickler(data, protocol=2).dump(["marker"])
    source, out = zipfile.ZipFile(io.BytesIO(buffer.getvalue())), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for name in source.namelist():
            target.writestr(name, data.getvalue() if name.endswith("data.pkl") else source.read(name))
    return out.getvalue()


@pytest.mark.parametrize("pid", [("storege", None, "0", "cpu", 1), "storage", (b"tensor",)])
@pytest.mark.parametrize("weights_only", [True, False])
def test_persistent_id_that_names_no_storage(pid, weights_only):
    """A persistent id that is no storage: the weights-only unpickler's UnpicklingError (type and
    first field checked before anything is read), the trusted path's own error otherwise."""
    data = _pickle_with_persistent_id(torch, pid)
    ours, theirs = assert_same_error(lambda: internals.load(io.BytesIO(data), weights_only=weights_only),
                                     lambda: torch.load(io.BytesIO(data), weights_only=weights_only))
    if weights_only:
        assert str(theirs).split("WeightsUnpickler error: ")[1] in str(ours)


def _saved_on_second_gpu(tmp_path):
    """A file as a two-GPU machine writes it: the storage's location is ``cuda:1``."""
    internals.save(internals.arange(3.0, device="cuda"), tmp_path / "gpu0.pt")
    source, path = zipfile.ZipFile(tmp_path / "gpu0.pt"), tmp_path / "gpu1.pt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as target:
        for name in source.namelist():
            data = source.read(name)
            target.writestr(name, data.replace(b"cuda:0", b"cuda:1") if name.endswith("data.pkl") else data)
    return path


@pytest.mark.parametrize("map_location", [None, "cuda:1", internals.device("cuda", 1)])
def test_loading_onto_a_cuda_device_that_does_not_exist_is_refused(tmp_path, map_location):
    """One cuda device (cuda:0): a storage bound for cuda:1 is torch's ``_validate_device``
    RuntimeError, never a tensor on a device without memory behind it."""
    with pytest.raises(RuntimeError) as info:
        internals.load(_saved_on_second_gpu(tmp_path), map_location=map_location)
    assert str(info.value) == ("Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. "
                               "Please use torch.load with map_location to map your storages to an existing device.")


def test_a_second_gpus_file_maps_onto_the_first(tmp_path):
    path = _saved_on_second_gpu(tmp_path)
    on_first = internals.load(path, map_location={"cuda:1": "cuda:0"})
    assert (str(on_first.device), on_first.tolist()) == ("cuda:0", [0.0, 1.0, 2.0])
    assert torch.load(path, map_location="cpu").tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("map_location", ["cpu:0", "CPU", "meta:0", "cudax", "cuda0", {"cpu": "cpu:0"}, "device-cpu-0"])
def test_map_location_names_only_what_torch_restores(tmp_path, map_location):
    """torch's deserializers know ``cpu`` and ``meta`` exactly and ``cuda`` with an index: other
    spellings the device parser would take (``cpu:0``, a device with an index) are its restore
    error, and ``cuda0`` the parser's."""
    torch.save(torch.ones(2), tmp_path / "t.pt")
    def where(lib):
        return lib.device("cpu", 0) if map_location == "device-cpu-0" else map_location
    ours, theirs = assert_same_error(lambda: internals.load(tmp_path / "t.pt", map_location=where(internals)),
                                     lambda: torch.load(tmp_path / "t.pt", map_location=where(torch)))
    assert str(ours) == str(theirs)


class TorchScaled(torch.Tensor):
    """A user's tensor subclass, saved under its own class name."""


class InternalsScaled(internals.Tensor):
    """The same subclass of internals' tensor."""


@pytest.mark.parametrize("weights_only", [True, False])
def test_a_tensor_subclass_keeps_its_class_or_is_refused(tmp_path, weights_only):
    """A subclass pickles as ``_rebuild_from_type_v2`` naming the class: loaded trusted, the
    class is imported and the tensor is of it again; weights-only, the class is a global outside
    the allow-list (torch's UnpicklingError), never a plain tensor in its place."""
    def run(lib, cls):
        t = lib.arange(3.0).as_subclass(cls)
        t.note = "kept"
        lib.save(t, tmp_path / f"{lib.__name__}.pt")
        try:
            got = lib.load(tmp_path / f"{lib.__name__}.pt", weights_only=weights_only)
        except pickle.UnpicklingError as error:
            return "refused", "WeightsUnpickler error: Unsupported global" in str(error)
        return type(got).__name__.replace(lib.__name__.capitalize(), ""), got.tolist(), got.note
    assert run(internals, InternalsScaled) == run(torch, TorchScaled)
