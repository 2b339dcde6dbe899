"""The reflection and replication pads torch declares structured (``aten/native/pad_nd.py``):
``reflection_pad1d``/``3d``, ``replication_pad1d``/``2d``/``3d`` and the backwards
``reflection_pad1d_backward``, ``reflection_pad3d_backward``, ``replication_pad1d_backward``. A meta
step checks the input and the pads and lays the output out; an impl step gathers (or adds the
gradient back). The out= overload is primary, the functional form derived from it. Then ``F.pad``
in each mode, ``constant_pad_nd`` and the padding modules: OpInfo samples, everyday calls,
gradients (twice) and the CUDA kernels (at the end).
"""

import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    opinfo_cases,
    same_error,
)
from helpers import run_everyday_call as _run

import internals
from internals.aten.native import pad_nd

FORWARDS = ("reflection_pad1d", "reflection_pad3d", "replication_pad1d", "replication_pad2d", "replication_pad3d")
BACKWARDS = ("reflection_pad1d_backward", "reflection_pad3d_backward", "replication_pad1d_backward")
# the pads torch leaves unstructured: a functional kernel each (the same two steps, no out=)
UNSTRUCTURED = ("reflection_pad2d", "reflection_pad2d_backward", "replication_pad2d_backward",
                "replication_pad3d_backward")


@pytest.mark.parametrize("name", FORWARDS + BACKWARDS)
def test_the_functional_form_is_derived_from_the_structured_out_kernel(name):
    assert_derived_from_structured_out(name, "grad_input" if name in BACKWARDS else "out", pad_nd)


def _input(L, dims, channels_last=False):
    x = L.arange(2. * 3 * 4 ** dims).reshape(2, 3, *[4] * dims).sin()
    if channels_last:
        x = x.contiguous(memory_format=L.channels_last if dims == 2 else L.channels_last_3d)
    return x


def _pads(dims):
    return [2, 1, 1, 3, 0, 2][:2 * dims]


def _pad(L, name, x, pads=None, **out):
    op = getattr(L.ops.aten, name)
    return (op.out if out else op)(x, pads or _pads(int(name[-2])), **out)


def _padded_shape(x, pads):
    shape = list(x.shape)
    for k in range(len(pads) // 2):
        shape[-1 - k] += pads[2 * k] + pads[2 * k + 1]
    return shape


def _backward(L, name, x, pads=None, **out):
    op = getattr(L.ops.aten, name)
    pads = pads or _pads(int(name[-11]))
    grad = L.arange(float(_numel(_padded_shape(x, pads)))).reshape(_padded_shape(x, pads)) / 7
    return (op.grad_input if out else op)(grad, x, pads, **out)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


CASES = {
    **{f"{name}": lambda L, name=name: _pad(L, name, _input(L, int(name[-2]))) for name in FORWARDS},
    "replication_pad2d, channels-last": lambda L: _pad(L, "replication_pad2d", _input(L, 2, True)),
    "reflection_pad3d, channels-last": lambda L: _pad(L, "reflection_pad3d", _input(L, 3, True)),
    "replication_pad1d, unbatched": lambda L: _pad(L, "replication_pad1d", _input(L, 1)[0]),
    **{f"{name}": lambda L, name=name: _backward(L, name, _input(L, int(name[-11]))) for name in BACKWARDS},
    "reflection_pad3d_backward, channels-last": lambda L: _backward(L, "reflection_pad3d_backward",
                                                                    _input(L, 3, True)),
    **{f"{name}": lambda L, name=name: (_backward if "backward" in name else _pad)(
        L, name, _input(L, 2, True)) for name in UNSTRUCTURED if "2d" in name},
}


@pytest.mark.parametrize("case", CASES)
def test_functional_forms_match_torch(case):
    assert_same(CASES[case](internals), CASES[case](torch))


OUT_CASES = {
    "reflection_pad1d into an empty out": lambda L: _pad(L, "reflection_pad1d", _input(L, 1), out=L.empty(0)),
    "replication_pad2d, channels-last layout given to a resized out": lambda L: _pad(
        L, "replication_pad2d", _input(L, 2, True), out=L.empty(0)),
    "reflection_pad1d, an out that fits keeps its strides": lambda L: _pad(
        L, "reflection_pad1d", _input(L, 1), out=L.empty(7, 3, 2).permute(2, 1, 0)),
    "replication_pad3d, an out that fits is laid out again": lambda L: _pad(
        L, "replication_pad3d", _input(L, 3), out=L.empty(2, 6, 8, 7, 3).permute(0, 4, 1, 2, 3)),
    "reflection_pad3d, a contiguous out laid out as a channels-last input": lambda L: _pad(
        L, "reflection_pad3d", _input(L, 3, True), out=L.empty(2, 3, 6, 8, 7)),
    "reflection_pad3d_backward, an out that fits is laid out again": lambda L: _backward(
        L, "reflection_pad3d_backward", _input(L, 3), grad_input=L.empty(2, 4, 4, 4, 3).permute(0, 4, 1, 2, 3)),
    "reflection_pad1d_backward into an empty out": lambda L: _backward(L, "reflection_pad1d_backward", _input(L, 1),
                                                                       grad_input=L.empty(0)),
    "replication_pad1d_backward, an out that fits keeps its strides": lambda L: _backward(
        L, "replication_pad1d_backward", _input(L, 1), grad_input=L.empty(4, 3, 2).permute(2, 1, 0)),
    "reflection_pad3d_backward into an empty out": lambda L: _backward(L, "reflection_pad3d_backward", _input(L, 3),
                                                                       grad_input=L.empty(0)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variants_match_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


RESIZE_CASES = {
    "reflection_pad1d": lambda L: _pad(L, "reflection_pad1d", _input(L, 1), out=L.empty(5)),
    "replication_pad3d": lambda L: _pad(L, "replication_pad3d", _input(L, 3), out=L.empty(2, 2)),
    "replication_pad1d_backward": lambda L: _backward(L, "replication_pad1d_backward", _input(L, 1),
                                                      grad_input=L.empty(3)),
}


@pytest.mark.parametrize("case", RESIZE_CASES)
def test_a_wrong_sized_out_is_resized_with_torchs_warning(case, capfd):
    assert_ops_out_resized_with_torchs_warning(RESIZE_CASES[case], capfd)


ERROR_CASES = {
    "out of another dtype": lambda L: _pad(L, "replication_pad2d", _input(L, 2), out=L.empty(0, dtype=L.float64)),
    "a reflection as wide as the input": lambda L: _pad(L, "reflection_pad1d", _input(L, 1), [4, 0], out=L.empty(0)),
    "an empty plane": lambda L: _pad(L, "replication_pad1d", L.ones(2, 0, 3), out=L.empty(0)),
    "pads cropping the whole input": lambda L: _pad(L, "replication_pad1d", _input(L, 1), [-3, -2], out=L.empty(0)),
    "a 2-d input to a 3-d pad": lambda L: _pad(L, "replication_pad3d", L.ones(3, 3), out=L.empty(0)),
    "gradient of another dtype out": lambda L: _backward(L, "reflection_pad1d_backward", _input(L, 1),
                                                         grad_input=L.empty(0, dtype=L.float64)),
    "out= of an input that requires grad": lambda L: _pad(L, "reflection_pad1d", _input(L, 1).requires_grad_(),
                                                          out=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def test_a_gradient_of_other_sizes_is_refused_as_torch_refuses_it():
    """torch's message names the dim it checks first (``grad_output width unexpected``); the
    class is the same."""
    def run(L):
        return L.ops.aten.replication_pad1d_backward(L.ones(2, 3, 6), _input(L, 1), [2, 1])
    assert_same_error(lambda: run(internals), lambda: run(torch))


FAKE_PROGRAMS = {
    "forward": lambda L, x: _pad(L, "replication_pad2d", x),
    "forward, out resized": lambda L, x: _pad(L, "reflection_pad3d", L.ones(3, 4, 4, 4), out=L.empty(0)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program], lambda: (_input(internals, 2, True),))


# =============================================================================================
# F.pad (each mode), constant_pad_nd and the padding modules:
# PyTorch's OpInfo samples (as given and non-contiguous), then everyday calls compared for values,
# strides, dtypes, grad_fn names, gradients (twice where torch differentiates twice), warnings and
# error messages
# =============================================================================================
F = internals.nn.functional
ADAPTERS = {
    "constant_pad_nd": Adapter(internals.constant_pad_nd),
    "nn.functional.pad": Adapter(F.pad, kwargs=("mode", "value")),
}
# F.pad's OpInfos are one a mode ("nn.functional.pad.reflect"), all with one adapter
PAD_MODES = ("constant", "reflect", "replicate", "circular")
OPINFO_NAMES = [name for name in ADAPTERS if name != "nn.functional.pad"] + [f"nn.functional.pad.{mode}"
                                                                            for mode in PAD_MODES]
OPINFO_CASES = opinfo_cases(OPINFO_NAMES, (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    "lib.nn.functional.pad(lib.arange(6.).reshape(1, 2, 3), (1, 0, 0, 2), value=-1)",
    "lib.nn.functional.pad(lib.ones(2, 2), (1,))",
    "lib.nn.functional.pad(lib.ones(2, 2), (1, 1, 1, 1, 1, 1))",
    "lib.nn.functional.pad(lib.ones(2, 2), (-1, 2))",
    "lib.nn.functional.pad(lib.ones(2, 2, dtype=lib.long), (1, 1), value=2.5)",
    "lib.nn.functional.pad(lib.ones(2, 3), (-2, -2))",
    "lib.nn.functional.pad(lib.ones(2, 3), (-1, 0))",
    "lib.nn.functional.pad(lib.ones(2, 2).requires_grad_(), (1, 1))",
    "lib.nn.functional.pad(lib.ones(1, 2, 2, 2).to(memory_format=lib.channels_last), (1, 1))",
    "lib.constant_pad_nd(lib.ones(2), [1, 1, 1])",
    "lib.constant_pad_nd(lib.ones(2), [1, 1, 1, 1])",
    *(f"lib.nn.functional.pad({x}, {p}, mode='{m}'{v})" for m in ("reflect", "replicate", "circular")
      for x, p, v in [("lib.arange(6.).reshape(1, 2, 3)", (2, 1), ""), ("lib.arange(6.).reshape(2, 3)", (-1, 2), ""),
                      ("lib.arange(9.).reshape(1, 1, 3, 3)", (1, 2, 2, 0), ""),
                      ("lib.arange(12.).reshape(1, 2, 3, 2)", (1, 1, 2, 2, 1, 1), ""),
                      ("lib.ones(1, 1, 3)", (3, 3), ""), ("lib.ones(1, 1, 3)", (4, 0), ""),
                      ("lib.ones(1, 1, 3)", (-3, -1), ""), ("lib.ones(1, 1, 3, 3)", (0, 0, -2, -2), ""),
                      ("lib.ones(1, 3, 3)", (1, 1, 3, 0), ""), ("lib.ones(2, 2, 3, 3)", (1, 2, 1, 2, 1, 2), ""),
                      ("lib.ones(1, 0, 3)", (1, 1), ""), ("lib.ones(0, 1, 3)", (1, 1), ""),
                      ("lib.ones(3)", (1, 1), ""), ("lib.ones(1, 1, 3, 3)", (1, 1), ""),
                      ("lib.ones(1, 1, 3)", (1, 1), ", value=1.0"), ("lib.ones(1, 1, 3)", (1, 1), ", value=0.0"),
                      ("lib.ones(2, 3, 3, dtype=lib.long)", (1, 1), ""),
                      ("lib.ones(2, 1, 3, 3).requires_grad_()", (1, 1, 1, 1), ""),
                      ("lib.ones(2, 1, 3, 3).to(memory_format=lib.channels_last)", (1, 1, 1, 1), "")]),
    "lib.nn.functional.pad(lib.ones(1, 1, 3), (1, 1), mode='wrap')",
    "lib.nn.ReflectionPad2d(1)",
    "lib.nn.ReplicationPad1d((1, 2))",
    "lib.nn.CircularPad3d(1)",
    "lib.nn.ZeroPad2d((1, 0, 2, 0))",
    "lib.nn.ConstantPad1d(2, -1.5)",
    "lib.nn.ReplicationPad3d(1)(lib.arange(8.).reshape(1, 2, 2, 2))",
    "lib.nn.ZeroPad1d(1)(lib.ones(1, 2))",
    "lib.nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 2.0)(lib.ones(1, 1, 1, 2))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


GRAD_CASES = {
    "pad": lambda lib, x, t: lib.nn.functional.pad(x * x * t, (1, -1, 2, 0), value=3.0),
    # each mode over 1, 2 and 3 dims (the 3-d input is x * t widened to 2 x 3 x 2), squared so
    # that the second derivative differentiates the backward operator
    **{f"pad, {mode} {n}d": lambda lib, x, t, mode=mode, n=n: lib.nn.functional.pad(
        (x * t).reshape(1, 2, 3, 1).expand(1, 2, 3, 2) if n == 3 else (x * t).reshape(1, 2, 3),
        (1, 1, 1, -1, 1, 0)[:2 * n], mode=mode) ** 2
       for mode in ("reflect", "replicate") for n in (1, 2, 3)},
    "pad, circular": lambda lib, x, t: lib.nn.functional.pad((x * x * t).reshape(1, 2, 3), (2, -1), mode="circular"),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


CUDA_PROGRAMS = {
    **{f"pad, {mode}": lambda lib, d, mode=mode: lib.nn.functional.pad(
        lib.arange(24.0, device=d).reshape(2, 3, 4), (2, 3, -1, 2), mode=mode)
       for mode in ("reflect", "replicate", "circular")},
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_backward_on_cuda(mode):
    """The backward operator's CUDA path adds the gradients up as the CPU one (and torch's)."""
    grads = []
    for lib, device in ((internals, "cuda"), (torch, "cpu")):
        x = lib.arange(24.0, device=device).reshape(2, 3, 4).requires_grad_()
        lib.nn.functional.pad(x, (2, 3, 1, 2), mode=mode).backward(lib.arange(108.0, device=device).reshape(2, 6, 9))
        grads.append(x.grad.cpu())
    assert_same(*grads, rtol=0, atol=0)
