"""The storage API against torch: ``tensor.storage()`` (a deprecated TypedStorage),
``Tensor.resize_``, ``UntypedStorage.resize_`` and the ``set_`` overloads.

Compared: sizes, strides, offsets, storage sizes, version counters, ``_base``, which tensors
share bytes, the bytes kept, warnings, and the class and message of every error. Bytes that a
resize adds are uninitialized in both libraries, so only the kept ones are compared.
"""
import copy
import pickle
import warnings
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from helpers import DTYPE_PAIRS, assert_same, assert_same_error, logging_modes
from hypothesis import given
from strategies import shapes

import internals
import internals.storage
from internals.c10.tensor_impl import required_storage_elements

LIBS = (torch, internals)


def geometry(t):
    """What a resize_ or set_ may change, and what tells whether it did."""
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes(), t._version,
            t._base is not None)


def same_error(fn):
    """``fn(lib)`` raises the same class with the same message in both libraries (the library's
    name aside); returns the message."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).replace("internals", "torch") == str(theirs)
    return str(theirs)


def fits(t):
    """The invariant internals keeps: every element a tensor reaches lies in its storage."""
    impl = t._impl
    return required_storage_elements(impl.sizes, impl.strides, impl.storage_offset) * t.element_size() <= \
        impl.storage.nbytes()


# ---------------------------------------------------------------------- TypedStorage
def storage_warnings(lib, fn):
    (torch.storage if lib is torch else internals.storage)._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message), w.filename) for w in caught]


def test_storage_warns_once_with_torchs_text():
    def twice(lib):
        x = lib.arange(3.)
        return lambda: (x.storage(), x.storage(), len(x.storage()))
    theirs, ours = (storage_warnings(lib, twice(lib)) for lib in LIBS)
    assert ours == theirs
    assert len(theirs) == 1 and theirs[0][0] is UserWarning and theirs[0][2] == __file__
    assert theirs[0][1].startswith("TypedStorage is deprecated.")


def test_storage_methods_warn_first_too():
    for name in ("size", "nbytes", "element_size", "data_ptr", "tolist", "untyped"):
        theirs, ours = (storage_warnings(lib, getattr(lib.zeros(2)._typed_storage(), name)) for lib in LIBS)
        assert [w[:2] for w in ours] == [w[:2] for w in theirs] and len(theirs) == 1, name


@pytest.mark.parametrize("ours_dtype, torch_dtype", DTYPE_PAIRS, ids=[t.name for t, _ in DTYPE_PAIRS])
def test_typed_storage_reads_elements(ours_dtype, torch_dtype):
    values = [0, 1, 2, 1, 0]
    base_t, base_i = torch.tensor(values, dtype=torch_dtype), internals.tensor(values, dtype=ours_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = base_t[2:].storage(), base_i[2:].storage()    # the whole storage, not the view
        assert (ours.size(), len(ours), ours.nbytes(), ours.element_size()) == \
            (theirs.size(), len(theirs), theirs.nbytes(), theirs.element_size())
        assert ours.tolist() == theirs.tolist() and list(ours) == list(theirs)
        assert [ours[i] for i in (0, 3, -1)] == [theirs[i] for i in (0, 3, -1)]
        assert repr(ours).replace("internals", "torch") == repr(theirs)
        assert ours.dtype is ours_dtype and str(ours.device) == str(theirs.device)
        assert ours._untyped_storage is ours.untyped() is base_i.untyped_storage()
        assert theirs._untyped_storage is theirs.untyped() is base_t.untyped_storage()
        assert ours.data_ptr() == base_i.untyped_storage().data_ptr() == base_i.data_ptr()


def test_typed_storage_repr_of_an_empty_storage():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = (repr(lib.tensor([], dtype=lib.float16).storage()) for lib in LIBS)
    assert ours.replace("internals", "torch") == theirs


def test_typed_storage_writes_reach_the_tensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in LIBS:
            x = lib.zeros(4)
            s = x.storage()
            s[1], s[-1] = 5.0, 7.0
            assert x.tolist() == [0.0, 5.0, 0.0, 7.0]


@pytest.mark.parametrize("index", [4, -5, 1.0, slice(0, 2), "a"])
def test_typed_storage_bad_index(index):
    def read(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.zeros(4).storage()[index]
    same_error(read)


def test_typed_storage_constructors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, kwargs in [((), {}), ((3,), {"dtype": "int16"}), (([1, 2, 3],), {"dtype": "int8"})]:
            theirs, ours = (lib.TypedStorage(*args, **{k: getattr(lib, v) for k, v in kwargs.items()})
                            for lib in LIBS)
            assert (ours.nbytes(), str(ours.dtype)[len("internals."):]) == \
                (theirs.nbytes(), str(theirs.dtype)[len("torch."):])
        assert internals.TypedStorage([1, 2, 3], dtype=internals.int8).tolist() == [1, 2, 3]


@pytest.mark.parametrize("args, kwargs", [
    ((), {"wrap_storage": 5, "dtype": "float32"}),
    ((), {"wrap_storage": "raw"}),
    ((), {"wrap_storage": "raw", "dtype": 1}),
    ((), {"wrap_storage": "raw", "dtype": "float32", "device": "cpu"}),
    ((1,), {"wrap_storage": "raw", "dtype": "float32"}),
    ((1, 2), {}),
    ((1.5,), {}),
])
def test_typed_storage_constructor_errors(args, kwargs):
    def make(lib):
        values = {"raw": lib.zeros(2).untyped_storage(), "float32": lib.float32}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.TypedStorage(*args, **{k: values.get(v, v) for k, v in kwargs.items()})
    same_error(make)


_CONVERSIONS = ["double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool",
                "complex_float", "complex_double"]


@pytest.mark.parametrize("method", _CONVERSIONS)
def test_typed_storage_conversions(method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = (lib.tensor([1.5, -2.0, 0.0]).storage() for lib in LIBS)
        t, o = getattr(theirs, method)(), getattr(ours, method)()
        assert str(o.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert o.tolist() == t.tolist()
        # always a new storage, even for the storage's own dtype (torch's ``_to`` clones then)
        assert (o.data_ptr() == ours.data_ptr()) == (t.data_ptr() == theirs.data_ptr()) is False


def test_typed_storage_copies_and_pickles():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in LIBS:
            x = lib.tensor([1.0, 2.0, 3.0])
            s = x.storage()
            c = s.clone()
            assert type(c) is type(s) and c.tolist() == [1.0, 2.0, 3.0] and c.data_ptr() != s.data_ptr()
            assert s.fill_(2.5) is s and x.tolist() == [2.5] * 3
            target = lib.TypedStorage(3, dtype=lib.float32)
            assert target.copy_(c) is target and target.tolist() == [1.0, 2.0, 3.0]
            assert target.copy_(lib.tensor([4.0, 5.0, 6.0]).untyped_storage()).tolist() == [4.0, 5.0, 6.0]
            moved = s.cpu()
            assert moved is not s and moved.data_ptr() == s.data_ptr()
            assert s.to(device=lib.device("cpu")).data_ptr() == s.data_ptr()
            assert copy.copy(s).data_ptr() != s.data_ptr() and copy.copy(s).tolist() == s.tolist()
            pair = copy.deepcopy([s, x.storage()])         # two wrappers of one storage stay one storage
            assert pair[0].data_ptr() == pair[1].data_ptr() != s.data_ptr() and pair[0].tolist() == s.tolist()
            back = pickle.loads(pickle.dumps(lib.tensor([1, 2]).storage()))
            assert back.dtype is lib.int64 and back.tolist() == [1, 2]
            assert s.resize_(5) is None and s.size() == 5
            assert (s.is_pinned(), s.is_shared(), s.pickle_storage_type()) == (False, False, "FloatStorage")
        assert internals.zeros(1).storage().type() == "internals.FloatStorage"
        assert torch.zeros(1).storage().type() == "torch.FloatStorage"


@pytest.mark.parametrize("case", ["copy_ of another size", "to with a positional device"])
def test_typed_storage_copy_errors(case):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.TypedStorage(3, dtype=lib.float64)
            if case == "copy_ of another size":
                return s.copy_(lib.tensor([1.0, 2.0, 3.0]).storage())
            return s.to("cpu")
    same_error(run)


def test_typed_storage_wraps_an_untyped_one():
    for lib in LIBS:
        raw = lib.arange(4, dtype=lib.int16).untyped_storage()
        typed = lib.TypedStorage(wrap_storage=raw, dtype=lib.int8, _internal=True)
        assert typed._untyped_storage is raw and typed._size() == 8


# ---------------------------------------------------------------------- Tensor.resize_
@given(n=st.integers(0, 12), start=st.integers(0, 3), sizes=st.lists(shapes(max_dims=3, max_side=5), min_size=1,
                                                                      max_size=3))
def test_resize_like_torch(n, start, sizes):
    """Resize a (possibly offset) view of an arange, several times: geometry, version, whether the
    storage moved, and the bytes kept (the arange's, as long as no resize cut them off)."""
    base_t = torch.arange(n + start, dtype=torch.float32)
    base_i = internals.from_torch(base_t)
    x_t, x_i = base_t[start:], base_i[start:]
    known = 4 * (n + start)            # bytes both libraries still hold from the arange
    for size in sizes:
        old = {x: bytes(x.untyped_storage()) for x in (x_t, x_i)}
        ptr = {x: x.untyped_storage().data_ptr() for x in (x_t, x_i)}
        assert x_i.resize_(size) is x_i and x_t.resize_(size) is x_t
        assert geometry(x_i) == geometry(x_t)
        for x in (x_t, x_i):            # a storage moves when it grows, and keeps its old bytes
            new = bytes(x.untyped_storage())
            moved = x.untyped_storage().data_ptr() != ptr[x]
            assert moved == (len(new) > len(old[x])) or not old[x]    # an empty storage's pointer is 0
            assert new[:len(old[x])] == old[x]
        known = min(known, x_t.untyped_storage().nbytes())
        assert bytes(x_i.untyped_storage())[:known] == bytes(x_t.untyped_storage())[:known]
        assert base_i.untyped_storage() is x_i.untyped_storage()        # the base sees the grown storage
        assert fits(x_i)


def test_resize_keeps_the_data_and_restrides():
    for lib in LIBS:
        x = lib.arange(6.).reshape(2, 3).t()
        x.resize_(3, 2)                         # same sizes: nothing happens, strides stay
        assert x.stride() == (1, 3) and x._version == 0
        x.resize_(2, 3)
        assert x.stride() == (3, 1) and x._version == 1 and x.tolist() == [[0., 1., 2.], [3., 4., 5.]]
        x.resize_((2, 3), memory_format=lib.contiguous_format)
        assert x._version == 1
    theirs, ours = (lib.zeros(2, 3, 4, 5).resize_(2, 3, 4, 5, memory_format=lib.channels_last) for lib in LIBS)
    assert_same(ours, theirs)


def test_resize_restriding_an_expanded_tensor_grows_its_storage():
    """torch gives the dense strides and leaves the 4-byte storage, which the tensor now overruns;
    internals gives the same strides and grows the storage to fit."""
    theirs, ours = (lib.zeros(1).expand(4).resize_(4, memory_format=lib.contiguous_format) for lib in LIBS)
    assert ours.stride() == theirs.stride() == (1,) and theirs.untyped_storage().nbytes() == 4
    assert ours.untyped_storage().nbytes() == 16 and fits(ours) and ours[0].item() == 0.


def test_resize_version_is_shared_with_views():
    for lib in LIBS:
        base = lib.zeros(6)
        view = base[1:]
        view.resize_(2)
        assert (base._version, view._version, view._base is base) == (1, 1, True)


@pytest.mark.parametrize("make, size, kwargs", [
    (lambda lib: lib.zeros(2, requires_grad=True), (3,), {}),
    (lambda lib: lib.zeros(2, requires_grad=True), (2,), {}),
    (lambda lib: lib.zeros(2), (-1,), {}),
    (lambda lib: lib.zeros(2), (2, -3), {}),
    (lambda lib: lib.zeros(2), (2,), {"memory_format": "preserve_format"}),
    (lambda lib: lib.zeros(2), (4,), {"memory_format": "channels_last"}),
    (lambda lib: lib.from_numpy(np.zeros(3, dtype=np.float32)), (10,), {}),
])
def test_resize_errors(make, size, kwargs):
    def resize(lib):
        x = make(lib)
        args = {k: getattr(lib, v) for k, v in kwargs.items()}
        try:
            x.resize_(size, **args)
        finally:
            if lib is internals:
                assert fits(x)      # torch may leave the new sizes on a storage it could not grow
    same_error(resize)


def test_resize_argument_errors():
    same_error(lambda lib: lib.zeros(2).resize_(2.5))
    same_error(lambda lib: lib.zeros(2).resize_((2,), (3,)))


def test_resize_of_a_numpy_tensor_may_shrink():
    for lib in LIBS:
        t = lib.from_numpy(np.zeros(3, dtype=np.float32))
        t.resize_(2)
        assert geometry(t)[:4] == ((2,), (1,), 0, 12)


def test_resize_on_cuda_keeps_the_data():
    x = internals.arange(4., device="cuda")
    x.resize_(2, 3)
    assert x.untyped_storage().nbytes() == 24 and x.reshape(-1)[:4].cpu().tolist() == [0., 1., 2., 3.]


# ---------------------------------------------------------------------- UntypedStorage.resize_
@given(n=st.integers(0, 16), sizes=st.lists(st.integers(0, 24), min_size=1, max_size=4))
def test_untyped_storage_resize_keeps_the_common_bytes(n, sizes):
    raws = {lib: lib.arange(n, dtype=lib.uint8).untyped_storage() for lib in LIBS}
    known = n                          # bytes both still hold from the arange
    for size in sizes:
        for raw in raws.values():
            old = bytes(raw)
            assert raw.resize_(size) is raw and raw.nbytes() == size and raw.resizable()
            assert bytes(raw)[:len(old)] == old[:size]
        known = min(known, size)
        assert bytes(raws[internals])[:known] == bytes(raws[torch])[:known] == bytes(range(known))


def test_untyped_storage_resize_errors():
    same_error(lambda lib: lib.zeros(2).untyped_storage().resize_(-1))
    same_error(lambda lib: lib.from_numpy(np.zeros(3, dtype=np.float32)).untyped_storage().resize_(4))
    for lib in LIBS:
        assert not lib.from_numpy(np.zeros(1)).untyped_storage().resizable()


def test_a_storage_never_shrinks_under_a_tensor():
    """torch lets a tensor read past the end of a storage that shrank under it (freed memory);
    internals refuses the shrink while the tensor lives, and allows it once it is gone."""
    x = internals.arange(6.)
    raw = x.untyped_storage()
    with pytest.raises(RuntimeError, match=r"cannot resize a storage to 8 bytes while a tensor of sizes \[6\] "
                                           r"reaches 24 bytes into it"):
        raw.resize_(8)
    assert raw.nbytes() == 24 and x.tolist() == [0., 1., 2., 3., 4., 5.]
    raw.resize_(24)                      # the same size: allowed
    del x
    assert raw.resize_(8).nbytes() == 8


# ---------------------------------------------------------------------- set_
def _storage_of(lib, n):
    return lib.arange(n, dtype=lib.float32).untyped_storage()


@st.composite
def set_geometries(draw):
    size = draw(shapes(max_dims=3, max_side=4))
    stride = draw(st.one_of(st.none(), st.lists(st.integers(0, 6), min_size=len(size), max_size=len(size))))
    start = draw(st.sampled_from(["zeros(2)", "same sizes", "transposed"]))
    return draw(st.integers(0, 12)), draw(st.integers(0, 14)), size, stride, start


def _target(lib, start, size):
    if start == "same sizes":
        return lib.zeros(size)
    if start == "transposed":
        return lib.zeros(3, 2).t()
    return lib.zeros(2)


@given(set_geometries())
def test_set_storage_like_torch(case):
    """``set_(storage, offset, size, stride)``: the same geometry, or the same error, and the same bytes."""
    n, offset, size, stride, start = case
    results = {}
    for lib in LIBS:
        raw, target = _storage_of(lib, n), _target(lib, start, size)
        args = (raw, offset, size) + (() if stride is None else (stride,))
        try:
            out = target.set_(*args)
        except RuntimeError as e:
            results[lib] = str(e)
            assert lib is torch or fits(target)
            continue
        assert out is target and target.untyped_storage() is raw
        results[lib] = (geometry(target), bytes(raw)[:4 * n])
        if lib is internals:
            assert fits(target)
    assert results[internals] == results[torch]


def test_set_overloads_share_the_bytes():
    for lib in LIBS:
        src = lib.arange(6.)
        t = lib.zeros(2)
        assert t.set_(src.untyped_storage()) is t and geometry(t) == ((6,), (1,), 0, 24, 1, False)
        t[0] = 9.                           # a write through t is a write to src's storage
        assert src[0].item() == 9.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = lib.zeros(2).set_(src.storage())
        assert geometry(t) == ((6,), (1,), 0, 24, 1, False)
        t = lib.zeros(2).set_(src.view(2, 3).t()[1:])
        assert geometry(t) == ((2, 2), (1, 3), 1, 24, 1, False) and t.tolist() == [[1., 4.], [2., 5.]]
        t = lib.zeros(2).set_(src, 2, (2, 2), (1, 2))
        assert geometry(t) == ((2, 2), (1, 2), 2, 24, 1, False) and t.untyped_storage() is src.untyped_storage()
        t = lib.zeros(2).set_(lib.arange(3), 1, (2,))       # given a geometry, any dtype's bytes will do
        assert geometry(t) == ((2,), (1,), 1, 24, 1, False) and t.dtype is lib.float32
        t = lib.ones(3)
        assert t.set_() is t and geometry(t) == ((0,), (1,), 0, 0, 1, False) and t.dtype is lib.float32
        t = lib.ones(3)
        assert t.set_(t) is t and geometry(t) == ((3,), (1,), 0, 12, 1, False)


def test_set_keeps_a_view_a_view_and_grows_a_shared_storage():
    for lib in LIBS:
        base = lib.zeros(4)
        view = base[1:]
        src = lib.arange(6.)
        view.set_(src.untyped_storage(), 2, (3, 3))         # needs 44 bytes: src's storage grows
        assert view._base is base and base._version == view._version == 1
        assert src.untyped_storage().nbytes() == 44 and src.tolist() == [0., 1., 2., 3., 4., 5.]


@pytest.mark.parametrize("call", [
    lambda lib, t, s: t.set_(s, 5, (3,)),                 # same sizes: checked against the storage
    lambda lib, t, s: t.set_(s, -1, (2,)),
    lambda lib, t, s: t.set_(s, 0, (2,), (1, 1)),
    lambda lib, t, s: t.set_(s, 0, (2,), (-1,)),
    lambda lib, t, s: t.set_(s, 0, (2, -1)),
    lambda lib, t, s: t.set_(lib.from_numpy(np.zeros(3, dtype=np.float32)).untyped_storage(), 1, (4,)),
    lambda lib, t, s: t.set_(lib.arange(6)),
    lambda lib, t, s: t.set_(lib.arange(6, dtype=lib.float64)._typed_storage()),
    lambda lib, t, s: t.set_(s, 0, (2, 3.5)),
    lambda lib, t, s: t.requires_grad_().set_(s),
], ids=["bounds", "offset", "stride length", "negative stride", "negative size", "not resizable", "tensor dtype",
        "typed storage dtype", "size type", "leaf requires grad"])
def test_set_errors(call):
    def run(lib):
        t = lib.zeros(3)
        try:
            call(lib, t, _storage_of(lib, 6))
        finally:
            if lib is internals:
                assert fits(t) and geometry(t) == ((3,), (1,), 0, 12, 0, False)
    same_error(run)


def test_set_and_autograd():
    for lib in LIBS:
        with lib.no_grad():
            leaf = lib.zeros(3, requires_grad=True)
            leaf.set_(_storage_of(lib, 2))
        assert leaf.requires_grad and leaf.grad_fn is None and leaf.shape == (2,)
        c = lib.zeros(3, requires_grad=True) * 1
        c.set_(lib.ones(3))
        assert c.grad_fn.name() == "torch::autograd::NotImplemented" and c.requires_grad
        a = lib.zeros(3)
        a.set_(lib.ones(3, requires_grad=True))
        assert a.requires_grad and a.grad_fn.name() == "torch::autograd::NotImplemented"
    same_error(lambda lib: (lib.zeros(3, requires_grad=True) * 1).set_(lib.ones(3)).sum().backward())


def test_a_dispatch_mode_sees_torchs_operators():
    """resize_ and each set_ form reach the dispatcher as the operator torch's do (the form with a
    tensor and a geometry is CompositeImplicitAutograd: a mode sees the storage overload)."""
    def program(lib):
        src = lib.arange(6.)
        t = lib.zeros(2)
        t.resize_(3)
        t.set_(src.untyped_storage())
        t.set_(src.untyped_storage(), 1, (2,))
        t.set_(src)
        t.set_(src, 1, (2, 2), (1, 2))
        t.set_()
    logs = {torch: [], internals: []}
    modes = dict(zip(LIBS, logging_modes(logs[torch], logs[internals])))
    for lib in LIBS:
        with modes[lib]:
            program(lib)
    assert logs[internals] == logs[torch]
    assert [op for op in logs[torch] if op.startswith(("aten.set_", "aten.resize_"))] == [
        "aten.resize_.default", "aten.set_.source_Storage", "aten.set_.source_Storage_storage_offset",
        "aten.set_.source_Tensor", "aten.set_.source_Storage_storage_offset", "aten.set_.default"]


def test_set_refuses_a_storage_on_another_device():
    """torch's message, whose fixed parts are read from its installed Resize.h."""
    header = (Path(torch.__path__[0]) / "include/ATen/native/Resize.h").read_text()
    assert '"Attempted to set the storage of a tensor on device \\"' in header
    assert '"\\".  This is no longer allowed; the devices must match."' in header
    t = internals.zeros(2)
    with pytest.raises(RuntimeError) as err:
        t.set_(internals.zeros(2, device="cuda").untyped_storage())
    assert str(err.value) == ('Attempted to set the storage of a tensor on device "cpu" to a storage on different '
                              'device "cuda:0".  This is no longer allowed; the devices must match.')
    assert fits(t) and t.device.type == "cpu"
