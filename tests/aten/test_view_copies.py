"""The view-copy operators (``view_copy``, ``transpose_copy``, ``split_copy``, ...): each view's
elements in a new contiguous tensor, with the view's errors, its gradient under a node named
after the view's (``TransposeBackward0_copy``) and torch's ``out=`` forms. PyTorch's OpInfo
samples, then everyday calls and errors, out=, gradients, and the meta device."""

import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

ADAPTERS = {name: Adapter(getattr(internals, name), name, kwargs=kwargs) for name, kwargs in (
    ("alias_copy", ()), ("as_strided_copy", ("storage_offset",)), ("diagonal_copy", ("offset", "dim1", "dim2")),
    ("expand_copy", ()), ("narrow_copy", ()), ("permute_copy", ()), ("split_with_sizes_copy", ("dim",)),
    ("squeeze_copy", ()), ("t_copy", ()), ("transpose_copy", ()), ("unbind_copy", ("dim",)),
    ("unfold_copy", ()), ("unsqueeze_copy", ()), ("view_copy", ()))}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def test_every_view_copy_torch_has_for_strided_tensors_is_here():
    """torch's public ``*_copy`` functions, but those of sparse and nested tensors' accessors."""
    sparse = {"values_copy", "indices_copy", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy",
              "row_indices_copy"}
    theirs = {n for n in dir(torch) if n.endswith("_copy") and not n.startswith("_")} - sparse - {"index_copy"}
    assert {n for n in theirs if not hasattr(internals, n)} == set()


X = "lib.arange(12.).reshape(3, 4)"
PROGRAMS = [
    f"lib.view_copy({X}, [4, 3])", f"lib.view_copy({X}, (-1,))", f"lib.view_copy({X}.t(), [12])",
    f"lib.view_copy({X}.t(), [6, 2])", f"lib.view_copy({X}, lib.int32)", f"lib.view_copy({X}, lib.float16)",
    f"lib.alias_copy({X}.t())", f"lib.detach_copy({X}[1:])", f"lib.t_copy({X})", f"lib.t_copy({X}[0])",
    f"lib.as_strided_copy({X}, (2, 2), (1, 4), 1)", f"lib.as_strided_copy({X}[1:], (3,), (5,))",
    f"lib.expand_copy({X}[:1], [2, 3, 4])", f"lib.expand_copy({X}[:, :1], (-1, 5))",
    f"lib.permute_copy({X}.reshape(2, 3, 2), (2, 0, 1))", f"lib.select_copy({X}, 1, -1)",
    f"lib.slice_copy({X}, 1, 1, None, 2)", f"lib.slice_copy({X})", f"lib.slice_copy({X}, 0, -2)",
    f"lib.squeeze_copy({X}.reshape(1, 3, 1, 4))", f"lib.squeeze_copy({X}.reshape(1, 3, 1, 4), 2)",
    f"lib.squeeze_copy({X}.reshape(1, 3, 1, 4), [0, 2])", f"lib.transpose_copy({X}, 0, -1)",
    f"lib.unfold_copy({X}, 1, 2, 1)", f"lib.unsqueeze_copy({X}, -1)", f"lib.narrow_copy({X}.t(), 1, 1, 2)",
    f"lib.view_as_real_copy(lib.complex({X}, -{X}))", f"lib.view_as_complex_copy({X}.reshape(6, 2))",
    f"lib.split_copy({X}, 2)", f"lib.split_copy({X}, 3, 1)", f"lib.split_with_sizes_copy({X}, [1, 3], 1)",
    f"lib.unbind_copy({X})", f"lib.unbind_copy({X}.t(), 1)", f"lib.diagonal_copy({X}, 1)",
    f"{X}.narrow_copy(0, 1, 2)", "lib.select_copy(lib.ones(0, 3), 1, 2)",
    # detach has no formula (torch's refusing node); view.dtype's output is not differentiable
    "lib.detach_copy(lib.ones(2, requires_grad=True))", "lib.view_copy(lib.ones(2, requires_grad=True), lib.float32)",
    "lib.detach_copy(lib.ones(2, requires_grad=True)).sum().backward()",
    # the views' errors
    f"lib.view_copy({X}, [5])", f"lib.view_copy({X}.t(), lib.float16)", f"lib.transpose_copy({X}, 0, 5)",
    f"lib.expand_copy({X}, [3, 5])", f"lib.select_copy({X}, 0, 3)", f"lib.narrow_copy({X}, 1, 2, 4)",
    f"lib.squeeze_copy({X}, 2)", f"lib.unfold_copy({X}, 1, 5, 1)", f"lib.split_with_sizes_copy({X}, [1, 1])",
    f"lib.view_as_complex_copy({X})", f"lib.view_as_real_copy({X})", f"lib.as_strided_copy({X}, (4, 4), (4, 1))",
    f"lib.permute_copy({X}, (0,))", f"lib.unbind_copy({X}, 2)", "lib.split_copy(lib.tensor(1.), 1)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


OUT_PROGRAMS = [
    f"lib.transpose_copy({X}, 0, 1, out=lib.empty(0))", f"lib.transpose_copy({X}, 0, 1, out=lib.empty(5))",
    f"lib.transpose_copy({X}, 0, 1, out=lib.empty(4, 3).t().t())",
    f"lib.transpose_copy({X}, 0, 1, out=lib.empty(0, dtype=lib.int64))",
    f"lib.transpose_copy({X}, 0, 1, out=lib.empty(0, dtype=lib.float64))",
    f"lib.view_copy({X}, [2, 6], out=lib.empty(0))",
    f"lib.view_copy({X}, lib.int32, out=lib.empty(0, dtype=lib.int32))",
    f"lib.select_copy({X}, 0, 1, out=lib.empty(4))", f"lib.slice_copy({X}, 1, 1, 3, out=lib.empty(0))",
    f"lib.squeeze_copy({X}[None], 0, out=lib.empty(0))", f"lib.expand_copy({X}[:1], [2, 4], out=lib.empty(0))",
    f"lib.narrow_copy({X}, 0, 1, 2, out=lib.empty(0))", f"lib.diagonal_copy({X}, out=lib.empty(0))",
    f"lib.diagonal_copy({X}, out=lib.empty(0, dtype=lib.int64))", f"lib.t_copy({X}, out=lib.empty(0))",
    f"lib.as_strided_copy({X}, (2,), (2,), out=lib.empty(0))", f"lib.alias_copy({X}, out=lib.empty(3, 4))",
    f"lib.unsqueeze_copy({X}, 0, out=lib.empty(0))", f"lib.unfold_copy({X}, 0, 2, 1, out=lib.empty(0))",
    f"lib.permute_copy({X}, (1, 0), out=lib.empty(0))", "lib.view_as_real_copy(lib.ones(2, dtype=lib.cfloat), "
    "out=lib.empty(0))",
]


@pytest.mark.parametrize("program", OUT_PROGRAMS)
def test_out_forms(program):
    """The result copied into ``out``: its dtype exactly, resized (with resize_output's warning
    where it had elements); ``out`` itself returned."""
    assert _run(internals, program) == _run(torch, program)


def _pieces_into(lib, op, outs, *args):
    x = lib.arange(6.).reshape(2, 3)
    outs = [eval(o, {"lib": lib}) for o in outs]
    returned = getattr(lib, op)(x, *args, out=outs)
    return returned, [(o.tolist(), tuple(o.shape), o.stride(), str(o.dtype).split(".")[-1]) for o in outs]


@pytest.mark.parametrize("op, outs, args", [
    ("split_copy", ["lib.empty(1, 3)", "lib.empty(1, 3, dtype=lib.int64)"], (1,)),
    ("split_copy", ["lib.empty(2, 3)", "lib.empty(3)"], (1,)),       # copy_ broadcasts; nothing resized
    ("split_copy", ["lib.empty(0)", "lib.empty(0)"], (1,)),
    ("split_copy", ["lib.empty(1, 3)"], (1,)),
    ("split_with_sizes_copy", ["lib.empty(0)", "lib.empty(5)"], ([1, 1],)),
    ("split_with_sizes_copy", ["lib.empty(1, 3, dtype=lib.int64)", "lib.empty(1, 3)"], ([1, 1],)),
    ("split_with_sizes_copy", ["lib.empty(0)"], ([1, 1],)),
    ("split_with_sizes_copy", ["lib.empty(0)", "lib.empty(0)"], ([1, 2],)),
    ("unbind_copy", ["lib.empty(0)", "lib.empty(0)"], ()),
    ("unbind_copy", ["lib.empty(0)", "lib.empty(0)"], (1,)),
    ("unbind_copy", ["lib.empty(3, dtype=lib.int64)", "lib.empty(3)"], ()),
    ("unbind_copy", ["lib.empty(3)"], ()),
])
def test_out_forms_of_lists(op, outs, args):
    """``split_copy`` copies each piece into its ``out`` as it is; ``split_with_sizes_copy`` and
    ``unbind_copy`` check each dtype and resize; all three count the outs first. None returned."""
    def run(lib):
        try:
            with pytest.warns(UserWarning) if outs[-1] == "lib.empty(5)" else _nothing():
                return _pieces_into(lib, op, outs, *args)
        except RuntimeError as error:
            return "error", str(error)
    assert run(internals) == run(torch)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# Each view copy of a product, so that the gradient reaches both factors (also run by
# tests/autograd/test_autograd.py, which checks that every node class is reached somewhere).
GRAD_BUILDS = [
    lambda lib, x, t: lib.view_copy(x * t, [3, 2]), lambda lib, x, t: lib.transpose_copy(x * t, 0, 1),
    lambda lib, x, t: lib.t_copy(x * t), lambda lib, x, t: lib.permute_copy(x * t, (1, 0)),
    lambda lib, x, t: lib.expand_copy((x * t)[:1], [4, 3]), lambda lib, x, t: lib.select_copy(x * t, 1, 2),
    lambda lib, x, t: lib.slice_copy(x * t, 1, 1), lambda lib, x, t: lib.squeeze_copy((x * t)[None]),
    lambda lib, x, t: lib.squeeze_copy((x * t)[None], 0), lambda lib, x, t: lib.squeeze_copy((x * t)[None], [0]),
    lambda lib, x, t: lib.unsqueeze_copy(x * t, 1), lambda lib, x, t: lib.unfold_copy(x * t, 1, 2, 1),
    lambda lib, x, t: lib.as_strided_copy(x * t, (2, 2), (1, 2), 1), lambda lib, x, t: lib.alias_copy(x * t),
    lambda lib, x, t: lib.narrow_copy(x * t, 1, 1, 2), lambda lib, x, t: lib.diagonal_copy(x * t),
    lambda lib, x, t: lib.view_as_real_copy(lib.complex(x, t)),
    lambda lib, x, t: lib.split_copy(x * t, 2, 1)[1], lambda lib, x, t: lib.split_with_sizes_copy(x * t, [1, 2], 1)[1],
    lambda lib, x, t: lib.unbind_copy(x * t, 1)[2],
]
GRAD_IDS = ["view", "transpose", "t", "permute", "expand", "select", "slice", "squeeze", "squeeze.dim",
        "squeeze.dims", "unsqueeze", "unfold", "as_strided", "alias", "narrow", "diagonal", "view_as_real", "split",
        "split_with_sizes", "unbind"]


@pytest.mark.parametrize("build", GRAD_BUILDS, ids=GRAD_IDS)
def test_gradients_and_nodes(build):
    compare_gradients_and_nodes(build, allow_unused=True)


@pytest.mark.parametrize("program", [
    "lib.transpose_copy(lib.empty(2, 3, device='meta'), 0, 1)", "lib.view_copy(lib.empty(2, 3, device='meta'), [6])",
    "lib.expand_copy(lib.empty(1, 3, device='meta'), [4, 3])", "lib.split_copy(lib.empty(5, 3, device='meta'), 2)",
    "lib.unbind_copy(lib.empty(2, 3, device='meta'), 1)",
    "lib.narrow_copy(lib.empty(4, 3, device='meta').t(), 1, 1, 2)",
    "lib.as_strided_copy(lib.empty(6, device='meta'), (2, 2), (1, 2))",
])
def test_meta_outputs(program):
    def shapes(lib):
        result = eval(program, {"lib": lib})
        results = result if isinstance(result, (list, tuple)) else [result]
        return [(tuple(t.shape), t.stride(), t.device.type) for t in results]
    assert shapes(internals) == shapes(torch)


def test_fake_outputs():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from internals._subclasses.fake_tensor import FakeTensorMode as OurFakeTensorMode

    def shapes(lib, mode):
        with mode:
            x = lib.empty(4, 6).t()
            results = [lib.transpose_copy(x, 0, 1), lib.view_copy(x, [24]), *lib.split_copy(x, 4)]
        return [(tuple(t.shape), t.stride()) for t in results]
    assert shapes(internals, OurFakeTensorMode()) == shapes(torch, FakeTensorMode())
