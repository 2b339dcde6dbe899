"""The Python object of a tensor, against torch: the attributes a user sets on it, and which
object comes back when autograd, a view or ``.grad`` hands a tensor to Python again.

torch keeps one Python object per ``TensorImpl`` and keeps it alive while C++ holds the tensor
(``c10/util/intrusive_ptr.h``, "PyObject preservation"); ``internals`` keeps the Python object
itself where torch keeps the C++ tensor. Either way a reader sees the same objects, checked here.
"""
import copy
import gc
import pickle

import pytest
import torch

import internals

LIBS = [torch, internals]


@pytest.fixture(autouse=True, scope="module")
def _collect_only_what_the_tests_make():
    """``gc.collect()`` in ``handed_back`` walks every object of the process, millions of them in a
    worker that has run much of the suite; frozen, the objects that existed before this module
    are left out of the walk (they are none of the tensors these tests drop), so each collection
    looks only at what the tests made: the same tensors are freed or kept as in a full walk. They
    stay frozen afterwards, as conftest.py froze what collection left: unfreezing would hand that
    too back to every later walk."""
    gc.collect()
    gc.freeze()
    yield


def handed_back(lib, get):
    """Set an attribute on a leaf, drop every Python name for it, and fetch it back through
    ``get(leaf)``'s holder: is it the same object, and does the attribute survive?"""
    x = lib.ones(3, requires_grad=True)
    x.tag = {"name": "x"}
    holder = get(x)
    expected = id(x)
    del x
    gc.collect()
    back = holder()
    return id(back) == expected, getattr(back, "tag", None)


def saved_input(x):
    y = x.sin()                  # sin saves its input for backward
    return lambda: y.grad_fn._saved_self


def view_base(x):
    v = x[1:]
    return lambda: v._base


def grad_of(x):
    w = x.detach().clone().requires_grad_()
    w.grad = x                  # ``.grad`` is kept in C++ by torch (``AutogradMeta::grad_``)
    return lambda: w.grad


@pytest.mark.parametrize("get", [saved_input, view_base, grad_of], ids=["saved input", "view base", "grad"])
def test_same_object_after_del(get):
    assert handed_back(torch, get) == (True, {"name": "x"})
    assert handed_back(internals, get) == handed_back(torch, get)


def test_saved_output_is_a_new_object_each_time():
    """An output is saved without its grad_fn (a cycle otherwise), so each unpack is a new tensor."""
    seen = {}
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        z = x.exp()                  # exp saves its result
        z.tag = "z"
        first, second = z.grad_fn._saved_result, z.grad_fn._saved_result
        seen[lib] = (first is z, first is second, hasattr(first, "tag"), first.grad_fn is z.grad_fn,
                     first.data_ptr() == z.data_ptr())
    assert seen[torch] == (False, False, False, True, True)
    assert seen[internals] == seen[torch]


def test_attributes_are_per_object():
    """A view, a detach and a clone are new Python objects: they start with no attributes."""
    seen = {}
    for lib in LIBS:
        x = lib.ones(4)
        x.tag = 1
        seen[lib] = [vars(t) for t in (x, x[1:], x.detach(), x.clone(), x.view(2, 2))]
    assert seen[torch] == [{"tag": 1}, {}, {}, {}, {}]
    assert seen[internals] == seen[torch]


def test_deepcopy_copies_the_attributes():
    seen = {}
    for lib in LIBS:
        x = lib.ones(2)
        x.tag = {"a": [1]}
        c = copy.deepcopy(x)
        seen[lib] = (c.tag, c.tag is x.tag, c.tag["a"] is x.tag["a"])
    assert seen[torch] == ({"a": [1]}, False, False)
    assert seen[internals] == seen[torch]


def test_pickle_keeps_the_attributes():
    seen = {}
    for lib in LIBS:
        x = lib.arange(4.0)[1:]
        x.tag = ("t", 2)
        y = pickle.loads(pickle.dumps(x))
        plain = pickle.loads(pickle.dumps(lib.arange(2.0)))
        seen[lib] = (y.tag, y.tolist(), y.storage_offset(), vars(plain))
    assert seen[torch] == (("t", 2), [1.0, 2.0, 3.0], 1, {})
    assert seen[internals] == seen[torch]


def test_attribute_errors_as_torch():
    """Names the class defines stay what they are: a read-only property refuses a new value."""
    for lib in LIBS:
        x = lib.ones(2)
        with pytest.raises(AttributeError):
            x.shape = (1, 2)
        with pytest.raises(AttributeError):
            _ = x.no_such_attribute


# ------------------------------------------------------------------ the Variable/Tensor merge

def test_variable_is_a_detached_tensor():
    seen = {}
    for lib in LIBS:
        t = lib.ones(2) * 2
        v = lib.autograd.Variable(t, requires_grad=True)
        t.add_(1)                    # Variable(t) is t.detach(): same storage, same version counter
        seen[lib] = (type(v).__name__, v is t, v.tolist(), v._version, v.is_leaf, v.requires_grad,
                     isinstance(t, lib.autograd.Variable), issubclass(lib.Tensor, lib.autograd.Variable),
                     lib.autograd.Variable().shape, lib.autograd.Variable().dtype is lib.float32)
    assert seen[torch] == ("Tensor", False, [3.0, 3.0], 1, True, True, True, False, (0,), True)
    assert seen[internals][:-2] == seen[torch][:-2]
    assert list(seen[internals][-2]) == [0] and seen[internals][-1]


def test_variable_refuses_what_torch_refuses():
    for lib in LIBS:
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            lib.autograd.Variable([1.0, 2.0])
        with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
            lib.autograd.Variable(lib.ones(2, dtype=lib.int64), requires_grad=True)
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(lib.ones(1), volatile=True)


def test_parameter_copies_as_torch_copies_it():
    """A Parameter's deepcopy is a Parameter with neither grad nor attributes; pickle keeps both
    its class and its attributes."""
    seen = {}
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(2))
        p.tag = "w"
        p.grad = lib.ones(2)
        c = copy.deepcopy(p)
        u = pickle.loads(pickle.dumps(p))
        seen[lib] = (type(c).__name__, c.requires_grad, c.grad, hasattr(c, "tag"),
                     type(u).__name__, u.requires_grad, u.tag, c.tolist())
    assert seen[torch] == ("Parameter", True, None, False, "Parameter", True, "w", [1.0, 1.0])
    assert seen[internals] == seen[torch]
