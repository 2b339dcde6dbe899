"""Checkpoints holding more than tensors, in both directions between torch and internals: a
torch.Size, dtypes, devices, sets, complex numbers and bytes; map_location as a device, a dict
or a function; torch's default weights_only=None; and torch's errors for a missing directory.
Generators partway through their streams. Damaged, unsafe, legacy and big-endian files, each
loaded by both libraries, and sparse COO tensors in both directions."""
import builtins
import collections
import copy
import io
import pickle
import zipfile

import numpy as np
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


def _drawn_from(lib):
    """A generator partway through its stream, a normal sample cached in its state."""
    g = lib.Generator().manual_seed(3)
    lib.rand(5, generator=g)
    lib.randn(1, generator=g, dtype=lib.float64)
    return g


def _next_draws(lib, g):
    return [g.initial_seed(), lib.rand(3, generator=g).tolist(), lib.randn(2, generator=g, dtype=lib.float64).tolist()]


@pytest.mark.parametrize("saver, loader", [(torch, internals), (internals, torch), (internals, internals)],
                         ids=["torch_to_internals", "internals_to_torch", "internals_round_trip"])
def test_a_generator_saved_mid_stream_goes_on_where_it_was(saver, loader):
    """torch pickles a generator as torch._C.Generator(device) given (seed, offset, state): the
    loaded one draws what the saved one would have drawn next. weights_only refuses the global."""
    buffer = io.BytesIO()
    saver.save({"g": _drawn_from(saver)}, buffer)
    buffer.seek(0)
    loaded = loader.load(buffer, weights_only=False)["g"]
    assert isinstance(loaded, loader.Generator)
    assert _next_draws(loader, loaded) == _next_draws(torch, _drawn_from(torch))
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="torch._C.Generator"):
        loader.load(buffer, weights_only=True)


def test_a_generator_deep_copied_or_pickled_keeps_its_place():
    for copied in (copy.deepcopy(_drawn_from(internals)), pickle.loads(pickle.dumps(_drawn_from(internals)))):
        assert _next_draws(internals, copied) == _next_draws(torch, _drawn_from(torch))


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


# ------------------------------------------------------------ damaged checkpoints
def _checkpoint():
    buffer = io.BytesIO()
    torch.save({"a": torch.arange(4.0), "b": torch.ones(2, dtype=torch.int64)}, buffer)
    return buffer.getvalue()


def _rewritten(change):
    """The checkpoint with each record passed through ``change(name, data)`` (None drops it)."""
    source = zipfile.ZipFile(io.BytesIO(_checkpoint()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name in source.namelist():
            data = change(name, source.read(name))
            if data is not None:
                archive.writestr(name, data)
    return out.getvalue()


def _in_record(suffix, edit):
    return lambda: _rewritten(lambda name, data: edit(data) if name.endswith(suffix) else data)


def _flipped(data, index):
    data = bytearray(data)
    data[index] ^= 0xFF
    return bytes(data)


class _RunsCode:
    def __reduce__(self):
        return (exec, ("import sys; sys.modules['builtins'].ran_from_checkpoint = True",))


def _legacy():
    buffer = io.BytesIO()
    torch.save([torch.arange(3.0), torch.arange(6).view(2, 3)[:, 1]], buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


_DAMAGED = {
    "empty_file": lambda: b"",
    "not_a_zip": lambda: b"hello world, not a zip",
    "truncated_in_the_header": lambda: _checkpoint()[:10],
    "truncated_halfway": lambda: _checkpoint()[: len(_checkpoint()) // 2],
    "truncated_before_the_directory_end": lambda: _checkpoint()[:-22],
    "last_byte_missing": lambda: _checkpoint()[:-1],
    "no_data_pkl": lambda: _rewritten(lambda name, data: None if name.endswith("data.pkl") else data),
    "missing_storage_record": lambda: _rewritten(lambda name, data: None if name.endswith("data/0") else data),
    "storage_record_too_short": _in_record("data/0", lambda data: data[:3]),
    "storage_record_too_long": _in_record("data/0", lambda data: data + b"more"),
    "unknown_byteorder": _in_record("byteorder", lambda data: b"middle"),
    "pickle_first_byte_flipped": _in_record("data.pkl", lambda data: _flipped(data, 0)),
    "pickle_opcode_flipped": _in_record("data.pkl", lambda data: _flipped(data, 5)),
    "pickle_stride_flipped": _in_record("data.pkl", lambda data: _flipped(data, len(data) // 2)),
    "pickle_with_code": _in_record("data.pkl", lambda data: pickle.dumps(_RunsCode(), protocol=2)),
    "plain_pickle_not_a_checkpoint": lambda: pickle.dumps({"a": 1}, protocol=2),
    "pickle_protocol_4": lambda: _saved_with_protocol(4),
    "legacy_storage_bytes_cut_short": lambda: _legacy()[:-4],
    "legacy_storage_count_cut_short": lambda: _legacy()[:-(8 + 6 * 8 + 6)],
    "legacy_pickle_with_code": lambda: b"".join(pickle.dumps(part, protocol=2) for part in (
        0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True}, _RunsCode())),
}


def _saved_with_protocol(protocol):
    buffer = io.BytesIO()
    torch.save({"t": torch.arange(3.0)}, buffer, pickle_protocol=protocol)
    return buffer.getvalue()


def _zeroed_in_place(record):
    """The middle third of a record's bytes zeroed where they lie, its CRC left as it was."""
    data = bytearray(_checkpoint())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(record)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    third = info.file_size // 3
    data[start + third: start + 2 * third] = bytes(third)
    return bytes(data)


def test_damaged_pickle_with_a_stale_crc_fails_in_the_unpickler_as_in_torch():
    """torch reads data.pkl without checking its CRC: the damage reaches the unpickler."""
    data = _zeroed_in_place(zipfile.ZipFile(io.BytesIO(_checkpoint())).namelist()[0])
    assert _outcome(internals, data)[0] is _outcome(torch, data)[0] is pickle.UnpicklingError


def _outcome(lib, data, **kwargs):
    try:
        return "loaded", lib.load(io.BytesIO(data), **kwargs)
    except Exception as error:           # the class and message are what is compared
        return type(error), str(error)


@pytest.mark.parametrize("damage", sorted(_DAMAGED))
def test_damaged_checkpoint_fails_as_in_torch(damage):
    data = _DAMAGED[damage]()
    theirs, ours = _outcome(torch, data), _outcome(internals, data)
    assert theirs[0] != "loaded" and ours[0] is theirs[0]
    # a refused global is named a second time at the end of internals' message
    assert ours[1] == theirs[1] or ours[1].startswith(theirs[1] + "\ninternals.load: unsupported global")
    assert not hasattr(builtins, "ran_from_checkpoint")


def test_legacy_checkpoint_loads_as_in_torch():
    theirs, ours = torch.load(io.BytesIO(_legacy())), internals.load(io.BytesIO(_legacy()))
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]
    assert [t.stride() for t in ours] == [t.stride() for t in theirs]


_LEGACY_OBJECTS = {
    "float_and_strided_view": lambda lib: [lib.arange(3.0), lib.arange(6).view(2, 3)[:, 1]],
    "shared_storage": lambda lib: (lambda t: {"a": t, "b": t[1:], "p": lib.nn.Parameter(t.double())})(
        lib.arange(4.0)),
    "bfloat16_empty_and_bool": lambda lib: (lib.arange(3).to(lib.bfloat16), lib.zeros(0, 2), lib.tensor(True)),
    "python_values": lambda lib: {"n": 3, "s": "x", "dtype": lib.int16, "t": lib.tensor([1 + 2j])},
}


def _leaf_facts(obj):
    """Every leaf of a nested object: a tensor's facts and class, anything else as torch prints it."""
    leaves = torch.utils._pytree.tree_flatten(obj)[0]
    return [(type(v).__name__, _tensor_facts(v) if hasattr(v, "stride") else repr(v).replace("internals", "torch"))
            for v in leaves]


@pytest.mark.parametrize("options", [dict(weights_only=False), dict(pickle_module=pickle)], ids=["weights_only_false",
                                                                                              "pickle_module"])
@pytest.mark.parametrize("saver", [torch, internals], ids=["torch_file", "internals_file"])
def test_legacy_file_of_any_object_loads_when_trusted(saver, options):
    """A legacy file holding an object of the caller's own class (its tensors inside it) loads
    when weights_only is off, as torch's plain unpickler loads it; weights-only refuses it."""
    buffer = io.BytesIO()
    saver.save({"box": Box(saver.arange(3.0)), "t": saver.ones(2)}, buffer, _use_new_zipfile_serialization=False)
    for lib in (torch, internals):
        buffer.seek(0)
        loaded = lib.load(buffer, **options)
        assert isinstance(loaded["box"].value, lib.Tensor) and loaded["box"].value.tolist() == [0.0, 1.0, 2.0]
        assert loaded["t"].tolist() == [1.0, 1.0]
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Box was not an allowed"):
            lib.load(buffer, weights_only=True)


@pytest.mark.parametrize("name", sorted(_LEGACY_OBJECTS))
@pytest.mark.parametrize("loader", [torch, internals], ids=["torch_loads", "internals_loads"])
def test_legacy_format_written_as_torch_writes_it(name, loader):
    """_use_new_zipfile_serialization=False writes torch's pre-zip stream of pickles."""
    files = []
    for lib in (torch, internals):
        buffer = io.BytesIO()
        lib.save(_LEGACY_OBJECTS[name](lib), buffer, _use_new_zipfile_serialization=False)
        files.append(buffer.getvalue())
    heads = []
    for data in files:      # magic number, protocol version, system info: the same pickles
        stream = io.BytesIO(data)
        heads.append([pickle.load(stream) for _ in range(3)] + [data[:stream.tell()]])
    assert heads[1] == heads[0]
    theirs, ours = (loader.load(io.BytesIO(data)) for data in files)
    assert _leaf_facts(ours) == _leaf_facts(theirs)


def test_legacy_save_into_a_missing_directory(tmp_path):
    path = tmp_path / "missing" / "t.pt"
    err_theirs, err_ours = (pytest.raises(FileNotFoundError, lib.save, {}, path, _use_new_zipfile_serialization=False)
                            for lib in (torch, internals))
    assert str(err_ours.value) == str(err_theirs.value)


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int16", "bfloat16", "bool"])
def test_big_endian_checkpoint_loads_as_in_torch(dtype):
    """A file written on a big-endian machine: each storage's elements byte-reversed (a complex
    number's two halves each on its own), and the byteorder record saying so."""
    buffer = io.BytesIO()
    torch.save({"t": (torch.arange(6) - 2).to(getattr(torch, dtype)) * (1 + 1j if dtype == "complex64" else 1)}, buffer)
    width = getattr(torch, dtype).itemsize // (2 if dtype == "complex64" else 1)
    swap = lambda data: np.frombuffer(data, np.uint8).reshape(-1, width)[:, ::-1].tobytes()  # noqa: E731
    source, out = zipfile.ZipFile(buffer), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name in source.namelist():
            data = source.read(name)
            archive.writestr(name, b"big" if name.endswith("byteorder") else swap(data) if "/data/" in name else data)
    theirs, ours = torch.load(io.BytesIO(out.getvalue()))["t"], internals.load(io.BytesIO(out.getvalue()))["t"]
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype).replace("torch", "internals")


# ------------------------------------------------------------ sparse COO tensors
def _sparse(lib, coalesced):
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([1.0, -2.0, 3.5]), (2, 3))
    return s.coalesce() if coalesced else s


def _sparse_parts(s):
    return s._indices().tolist(), s._values().tolist(), list(s.size()), s.is_coalesced(), str(s.layout)[-10:]


@pytest.mark.parametrize("coalesced", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("saver, loader", [(torch, internals), (internals, torch), (internals, internals)],
                         ids=["torch_to_internals", "internals_to_torch", "internals_round_trip"])
def test_sparse_coo_tensor_across_libraries(saver, loader, coalesced):
    buffer = io.BytesIO()
    saver.save({"s": _sparse(saver, coalesced), "layout": saver.sparse_coo}, buffer)
    buffer.seek(0)
    loaded = loader.load(buffer)
    assert _sparse_parts(loaded["s"]) == _sparse_parts(_sparse(torch, coalesced))
    assert str(loaded["layout"])[-10:] == "sparse_coo"


def test_sparse_indices_outside_the_size_are_refused():
    """torch checks a loaded sparse tensor only when asked to (its invariant checks); internals
    always checks, so no index reaches past the values."""
    bad = torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.tensor([1.0, 2.0]), (3,), check_invariants=False)
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    with torch.sparse.check_sparse_tensor_invariants():
        theirs = _outcome(torch, buffer.getvalue())
    assert _outcome(internals, buffer.getvalue()) == theirs and theirs[0] is RuntimeError


# ------------------------------------------------------------ compressed sparse tensors (CSR, CSC, BSR, BSC)
def _compressed(lib, layout):
    x = lib.tensor([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 3.5, -1.0]])
    blocksize = (1, 2) if layout in ("sparse_bsr", "sparse_bsc") else None
    return x.to_sparse(layout=getattr(lib, layout), blocksize=blocksize)


def _compressed_parts(s):
    compressed, plain = (("crow_indices", "col_indices") if str(s.layout)[-3:] in ("csr", "bsr")
                         else ("ccol_indices", "row_indices"))
    return ([getattr(s, name)().tolist() for name in (compressed, plain, "values")], list(s.size()),
            str(s.layout).split(".")[-1])


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
@pytest.mark.parametrize("saver, loader", [(torch, internals), (internals, torch), (internals, internals)],
                         ids=["torch_to_internals", "internals_to_torch", "internals_round_trip"])
def test_compressed_sparse_tensor_across_libraries(saver, loader, layout):
    buffer = io.BytesIO()
    saver.save({"s": _compressed(saver, layout), "layout": getattr(saver, layout)}, buffer)
    buffer.seek(0)
    loaded = loader.load(buffer)
    assert _compressed_parts(loaded["s"]) == _compressed_parts(_compressed(torch, layout))
    assert str(loaded["layout"]).split(".")[-1] == layout


def test_compressed_indices_outside_the_size_are_refused():
    bad = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 7]), torch.tensor([1.0, 2.0]), (2, 3))
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    with torch.sparse.check_sparse_tensor_invariants():
        theirs = _outcome(torch, buffer.getvalue())
    assert _outcome(internals, buffer.getvalue()) == theirs and theirs[0] is RuntimeError


# ------------------------------------------------------------ what the hostile comparison found
def _tensor_facts(t):
    values = t.float().tolist() if str(t.dtype).endswith("bfloat16") else t.tolist()
    return str(values), list(t.shape), list(t.stride()), t.storage_offset(), str(t.dtype).split(".")[-1]


_VIEWS = {
    "bfloat16": lambda lib: (lib.arange(6) - 2).to(lib.bfloat16).reshape(2, 3),
    "complex128": lambda lib: lib.arange(4.0).to(lib.complex128) * (1 - 2j),
    "bool_transposed": lambda lib: (lib.arange(6).reshape(2, 3) % 2 == 0).t(),
    "zero_dim": lambda lib: lib.tensor(-3.5),
    "empty_3d": lambda lib: lib.zeros(2, 0, 3),
    "offset_view": lambda lib: lib.arange(12.0).reshape(3, 4)[1:, 2:],
    "expanded": lambda lib: lib.arange(3.0).expand(4, 3),
}


@pytest.mark.parametrize("view", sorted(_VIEWS))
@pytest.mark.parametrize("saver, loader", [(torch, internals), (internals, torch)],
                         ids=["torch_to_internals", "internals_to_torch"])
def test_dtypes_and_views_across_libraries(saver, loader, view):
    buffer = io.BytesIO()
    saver.save({"t": _VIEWS[view](saver)}, buffer)
    buffer.seek(0)
    assert _tensor_facts(loader.load(buffer)["t"]) == _tensor_facts(_VIEWS[view](torch))


@pytest.mark.parametrize("value", [collections.Counter("aab"), bytearray(b"xy"), frozenset({1})],
                         ids=["counter", "bytearray", "frozenset"])
def test_python_values_as_torch_allows_them(value):
    """torch's weights-only unpickler admits Counter and bytearray but not frozenset."""
    buffer = io.BytesIO()
    torch.save({"v": value}, buffer)
    theirs, ours = _outcome(torch, buffer.getvalue()), _outcome(internals, buffer.getvalue())
    assert ours[0] is theirs[0] and (ours[0] != "loaded" or ours[1] == theirs[1])


@pytest.mark.parametrize("map_location", [0, ["cpu"], b"cpu"], ids=["int", "list", "bytes"])
def test_map_location_of_another_type_is_called_as_in_torch(map_location):
    buffer = io.BytesIO()
    torch.save({"t": torch.arange(3.0)}, buffer)
    theirs = _outcome(torch, buffer.getvalue(), map_location=map_location)
    ours = _outcome(internals, buffer.getvalue(), map_location=map_location)
    assert ours[0] is theirs[0] is TypeError     # torch's message for bytes comes from deeper inside it


@pytest.mark.parametrize("view", ["conj", "conj_of_a_slice", "neg_imag", "parameter"])
def test_conjugate_and_negative_views_load_with_their_values(view):
    """torch stores a conjugate (or negative) view as the plain storage plus a bit in the
    tensor's metadata: loading must show the values torch shows, not the storage's."""
    z = torch.complex(torch.tensor([1.0, -2.0, 0.5]), torch.tensor([3.0, 4.0, -1.5]))
    value = {"conj": z.conj(), "conj_of_a_slice": z[1:].conj(), "neg_imag": z.conj().imag,
             "parameter": torch.nn.Parameter(z.conj(), requires_grad=False)}[view]
    buffer = io.BytesIO()
    torch.save({"v": value}, buffer)
    for weights_only in (True, None):        # torch's default and the explicit safe form
        ours = internals.load(io.BytesIO(buffer.getvalue()), weights_only=weights_only)["v"]
        assert ours.tolist() == value.resolve_conj().resolve_neg().tolist()
        assert type(ours).__name__ == type(value).__name__


class Box:
    """A class of the caller's own: refused by a weights-only load until allowed."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Box) and other.value == self.value


def _saved(lib, obj, **kwargs):
    buffer = io.BytesIO()
    lib.save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("saver", [torch, internals], ids=["torch_file", "internals_file"])
def test_safe_globals_allow_a_class_for_weights_only_loads(saver):
    """The allow-list torch's refusal message points to: the context allows the class inside the
    block only; add_safe_globals until cleared, also by another name given beside the class;
    get_unsafe_globals_in_checkpoint lists what a weights-only load would refuse."""
    payload = {"box": Box(2), "t": saver.arange(3.0), "sizes": collections.OrderedDict(a=1)}
    for lib in (torch, internals):
        assert lib.serialization.get_unsafe_globals_in_checkpoint(_saved(saver, payload)) == [f"{__name__}.Box"]
        with lib.serialization.safe_globals([Box]):
            loaded = lib.load(_saved(saver, payload), weights_only=True)
        assert loaded["box"] == Box(2) and loaded["t"].tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Box was not an allowed"):
            lib.load(_saved(saver, payload), weights_only=True)
        lib.serialization.add_safe_globals([(Box, f"{__name__}.Box")])
        try:
            assert lib.serialization.get_unsafe_globals_in_checkpoint(_saved(saver, payload)) == []
            assert lib.load(_saved(saver, payload), weights_only=True)["box"] == Box(2)
        finally:
            lib.serialization.clear_safe_globals()
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        legacy = _saved(saver, [1], _use_new_zipfile_serialization=False)
        internals.serialization.get_unsafe_globals_in_checkpoint(legacy)


@pytest.mark.parametrize("case", ["pickle_module_and_weights_only", "pickle_module_alone", "forced_by_environment",
                                  "forced_both_ways", "mmap_of_a_legacy_file", "save_onto_a_folder"])
def test_how_load_decides_weights_only_and_refuses_as_torch(case, tmp_path, monkeypatch):
    """torch.load's own rules: a pickle module means weights_only=False unless asked for (then it
    refuses), the environment variables force either way, mmap wants the zip format; a folder
    given to save is refused by the file writer."""
    def run(lib):
        if case == "pickle_module_and_weights_only":
            return lib.load(_saved(lib, [1]), weights_only=True, pickle_module=pickle)
        if case == "pickle_module_alone":
            return lib.load(_saved(lib, [Box(1)]), pickle_module=pickle)
        if case == "forced_by_environment":
            monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
            with pytest.warns(UserWarning, match="forcing weights_only=False"):
                return lib.load(_saved(lib, [Box(1)]))
        if case == "forced_both_ways":
            monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
            monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "yes")
            return lib.load(_saved(lib, [1]))
        if case == "mmap_of_a_legacy_file":
            path = str(tmp_path / f"{lib.__name__}.pt")
            lib.save([lib.ones(2)], path, _use_new_zipfile_serialization=False)
            return lib.load(path, mmap=True)
        return lib.save([1], str(tmp_path))
    try:
        expected = run(torch)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as ours:
            run(internals)
        assert str(ours.value).replace("internals", "torch") == str(error)
        return
    assert run(internals) == expected
