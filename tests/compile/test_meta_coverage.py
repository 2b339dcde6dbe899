"""Every operator with a kernel runs on fake tensors, with the real kernel's sizes, strides and
dtype (torch's ``test/test_fake_tensor.py`` and its ``CrossRefFakeMode``).

The samples are torch's OpInfo samples, met at the aten level: each OpInfo's first samples run
on torch under a recording dispatch mode (forward, then backward where there is a gradient),
so every aten call torch makes for them, with its arguments, becomes a case. Each case runs
through internals' operator for real and again on fakes under ``FakeTensorMode``; the outputs'
metadata must agree. The out= and in-place overloads of each recorded call are run the same
way. Then every operator of ``native_functions.yaml`` that has a kernel must have been checked,
or be listed below with the reason it is not.
"""
import collections
import itertools
import warnings

import numpy as np
import pytest
import torch
from helpers import Unsupported, to_ours
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._python_dispatch import TorchDispatchMode
from torchgen.model import SchemaKind

import internals
from internals._ops import ops
from internals._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
)
from internals.aten import dispatcher

SAMPLES_PER_OPINFO = 2
CASES_PER_OPERATOR = 3      # recorded calls checked per operator: enough to vary the layouts, and quick
# none of their operators has a kernel here, torch.special's few aside (in _direct_cases)
SKIPPED_FAMILIES = ("fft.", "sparse.", "signal.", "special.")
DTYPES = (torch.float32, torch.int64, torch.bool)
KERNEL_KEYS = {"CPU", "CUDA", "CompositeExplicitAutograd"}

# Operators with a kernel that this test does not check, each with the reason.
NOT_CHECKED = {
    # the output's shape is the data's: fake tensors refuse them (tested below)
    **dict.fromkeys(("nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "bincount",
                     "repeat_interleave.Tensor", "argwhere", "_pack_padded_sequence", "_ctc_loss",
                     "_ctc_loss.Tensor", "linalg_lstsq", "linalg_lstsq.out"),
                    "output shape depends on values"),
    # a Python value computed from the data
    **dict.fromkeys(("_local_scalar_dense", "equal", "allclose", "is_nonzero"), "returns a value of the data"),
    # sparse layouts: the fake tensors here are strided only
    **dict.fromkeys(("to_sparse", "to_sparse.sparse_dim", "_to_sparse", "_to_sparse.sparse_dim", "to_dense",
                     "_to_dense", "coalesce", "_coalesce", "indices", "values", "_indices", "_values", "_nnz",
                     "is_coalesced", "sparse_dim", "dense_dim", "crow_indices", "col_indices", "ccol_indices",
                     "row_indices", "to_sparse_csr", "_to_sparse_csr", "to_sparse_csc", "_to_sparse_csc",
                     "to_sparse_bsr", "_to_sparse_bsr", "to_sparse_bsc", "_to_sparse_bsc"), "sparse layout"),
    # out= forms over a solve: a fake out= tensor cannot be resized in metadata-only execution, so
    # the fake run falls back to the real kernel on the fakes' zero-filled data, a singular matrix
    **dict.fromkeys(("linalg_tensorinv.out", "linalg_tensorsolve.out"), "solves a matrix of no values"),
    # storage-level surgery: a fake has no storage to point at
    **dict.fromkeys(("set_.source_Storage", "set_.source_Storage_storage_offset", "set_.source_Tensor", "set_"),
                    "swaps the storage itself"),
}


def _lstm_layer_cases():
    """One ``mkldnn_rnn_layer`` call (3 steps, batch 2, 3 features, hidden 4) and its backward."""
    args = [internals.randn(*s) for s in ((3, 2, 3), (16, 3), (16, 4), (16,), (16,), (2, 4), (2, 4))]
    out = internals.ops.aten.mkldnn_rnn_layer(*args, False, [], 2, 4, 1, True, False, False, True)
    return [("aten::mkldnn_rnn_layer", (*args, True, [], 2, 4, 1, True, False, False, True), {}),
            ("aten::mkldnn_rnn_layer_backward", (*args, *out[:3], internals.ones(3, 2, 4), None, internals.ones(2, 4),
                                                 False, 2, 4, 1, True, True, False, [], False, out[3]), {})]


class _Recorder(TorchDispatchMode):
    """Writes down every aten call torch makes, with its arguments."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.calls.append((func.name(), args, kwargs))
        return out


def _run_sample(op, sample):
    """The OpInfo's function on one sample, then a backward through its first float output."""
    out = op.op(sample.input, *sample.args, **sample.kwargs)
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    if isinstance(first, torch.Tensor) and first.requires_grad and first.numel():
        first.sum().backward()


def _recorded_calls():
    """(aten name, args, kwargs) for the first samples of every OpInfo, in float32, int64 and bool."""
    calls = []
    warnings.simplefilter("ignore")
    for op, dtype in itertools.product(op_db, DTYPES):
        if op.name.startswith(SKIPPED_FAMILIES) or not op.supports_dtype(dtype, "cpu"):
            continue
        torch.manual_seed(0)
        try:
            samples = list(itertools.islice(op.sample_inputs_func(op, "cpu", dtype, dtype.is_floating_point),
                                            SAMPLES_PER_OPINFO))
        except Exception:   # an OpInfo whose generator needs what this build of torch lacks
            continue
        for sample in samples:
            try:
                with _Recorder(calls):
                    _run_sample(op, sample)
            except Exception:   # torch refuses this sample: the calls before the refusal still count
                pass
    calls += _factory_calls()
    return calls


def _factory_calls():
    """Overloads no OpInfo's first samples reach: random and range factories with a generator or
    out=, Python-number operands, the shift operators, out= forms of multi-output ops. Each line
    runs alone, so a call torch refuses hides none of the others."""
    calls = []
    scope = {"torch": torch, "x": torch.randn(3, 4), "i": torch.arange(12).reshape(3, 4),
             "g": torch.Generator().manual_seed(0), "z": torch.zeros(2, 3), "s": torch.arange(5.0),
             "img": torch.randn(1, 2, 5, 5, requires_grad=True),
             "vol": torch.randn(1, 2, 3, 4, 4, requires_grad=True), "emb": torch.randn(5, 3, requires_grad=True),
             "bags": torch.tensor([1, 2, 4, 3]), "starts": torch.tensor([0, 2])}
    for line in _EXTRA_CALLS:
        try:
            with _Recorder(calls):
                exec(line, scope)
        except Exception:
            pass
    return calls


_EXTRA_CALLS = [
    'torch.rand(2, 3, generator=g), torch.randn(2, 3, generator=g), torch.randint(5, (2, 3), generator=g)',
    'torch.randint(1, 5, (4,), generator=g), torch.randperm(5), torch.randperm(5, generator=g)',
    'torch.rand_like(z), torch.rand_like(z, generator=g), torch.randn_like(z, generator=g)',
    'torch.randint_like(z, 7, generator=g), torch.randint_like(z, 1, 7, generator=g, dtype=torch.int64)',
    'z.random_(), z.random_(5), z.random_(1, 5), z.bernoulli_(z.clone().fill_(0.5)), z.bernoulli(0.3)',
    'torch.normal(z, 1.0), torch.normal(1.0, z.abs() + 1), torch.normal(z, z.abs() + 1)',
    'torch.normal(z, 1.0, out=torch.empty(2, 3)), torch.normal(0.0, 1.0, (2, 3), out=torch.empty(0))',
    'torch.poisson(x.abs()), torch.poisson(x.abs().t(), generator=g)',
    'torch.arange(1, 5), torch.triu_indices(3, 4), torch.tril_indices(4, 3, 1)',
    'torch.linspace(0.5, torch.tensor(2.0), 4), torch.logspace(0.5, torch.tensor(2.0), 4)',
    'torch.ops.aten.norm.Scalar(x, 2), torch.ops.aten.norm.ScalarOpt_dim(x, 3, [1])',
    'torch.eye(3, out=torch.empty(0)), torch.eye(2, 3, out=torch.empty(0))',
    'i & 3, i | 3, i ^ 3, i << 2, i >> 1',
    'torch.bitwise_and(3, i), torch.bitwise_or(3, i), torch.bitwise_xor(3, i)',
    'i.clone().bitwise_and_(3), i.clone().bitwise_or_(3), i.clone().bitwise_xor_(3)',
    'torch.bitwise_left_shift(i, 2), torch.bitwise_left_shift(2, i), torch.bitwise_right_shift(i, 1)',
    'torch.bitwise_right_shift(64, i), i.clone().bitwise_left_shift_(1), i.clone().bitwise_right_shift_(1)',
    'j = i.clone()',
    'j <<= 1',
    'j >>= 1',
    'j.__ilshift__(i), j.__irshift__(i), i.__lshift__(i), i.__rshift__(i)',
    'torch.copysign(x, 2.0), x.clone().copysign_(-2.0), torch.div(x, 2, rounding_mode="floor")',
    'x.clone().div_(2, rounding_mode="trunc"), torch.floor_divide(x, 2), x.clone().floor_divide_(2)',
    'torch.fmod(x, 2), x.clone().fmod_(2), torch.remainder(2, x), torch.xlogy(2, x.abs()), torch.xlogy(x, 2)',
    'x.clone().xlogy_(2), torch.lerp(x, x + 1, x), x.clone().lerp_(x + 1, x), x.clamp(-1, 1)',
    'x.clamp_max(1), x.clone().clamp_max_(1), x.clone().fill_(torch.tensor(2.0))',
    'x.renorm(2, 0, 1.0), x.clone().renorm_(1, 1, 0.5), torch.renorm(x, 2, 0, 1.0, out=torch.empty(0))',
    'torch.linalg.solve(x[:, :3] + 3 * torch.eye(3), x), torch.linalg.cholesky(torch.eye(3) * 2)',
    'torch.searchsorted(s, 2.5), torch.bucketize(2.5, s), torch.sort(x, stable=True)',
    'torch.sort(x, stable=True, out=(torch.empty(0), torch.empty(0, dtype=torch.int64)))',
    'x.view(torch.int32), torch.complex(x, x), torch.view_as_real(torch.complex(x, x))',
    'torch.split_copy(x, 2, out=[torch.empty(2, 4), torch.empty(1, 4)]), torch.unbind_copy(x, 1, out=[torch.empty(0) '
    'for _ in range(4)]), torch.split_with_sizes_copy(x, [1, 3], 1, out=[torch.empty(0), torch.empty(0)])',
    'torch.unsafe_split(x, 2), torch.unsafe_split_with_sizes(x, [1, 3], 1), x.unsafe_chunk(2, 1)',
    'torch.all(x, dim=(0, 1)), torch.any(x, dim=(0, 1)), torch.count_nonzero(x, dim=(0,))',
    'x.is_same_size(x), x.scatter(0, i[:1] % 3, 2.0, reduce="add")',
    'x.clone().scatter_(0, i[:1] % 3, 2.0, reduce="multiply")',
    'torch.cdist(x, x, compute_mode="use_mm_for_euclid_dist"), torch.linalg.lu_factor_ex(x[:, :3])',
    'torch.nn.functional.conv2d(img, torch.randn(3, 2, 3, 3)).sum().backward()',
    'torch.nn.functional.nll_loss(img.log_softmax(1), torch.zeros(1, 5, 5, dtype=torch.int64)).backward()',
    'torch.ops.aten.zero(x), torch.ops.aten.fill.Scalar(x, 2), torch.ops.aten.fill.Tensor(x, x[0, 0])',
    'torch.ops.aten.copy(x, x[0]), torch.ops.aten.copy(x[:, 1], s[:3]), torch.ops.aten.copy(x.t(), x[0, :3])',
    'torch.nn.functional.pad(img, (1, 1, 1, 1), mode="reflect").sum().backward()',
    'torch.nn.functional.pad(vol, (1, 1, 1, 1, 1, 1), mode="reflect").sum().backward()',
    'torch.nn.functional.pad(vol, (1, 1, 1, 1, 1, 1), mode="replicate").sum().backward()',
    'torch.nn.functional.interpolate(img, scale_factor=2).sum().backward()',
    'torch.nn.functional.interpolate(vol, scale_factor=1.5).sum().backward()',
    'torch.nn.functional.interpolate(vol, scale_factor=1.5, mode="nearest-exact").sum().backward()',
    'torch.nn.functional.interpolate(img, scale_factor=1.5, mode="nearest-exact").sum().backward()',
    'torch.nn.functional.interpolate(vol, size=(4, 3, 5), mode="trilinear").sum().backward()',
    'torch.nn.functional.interpolate(img, size=(4, 7), mode="bicubic").sum().backward()',
    'torch.nn.functional.grid_sample(img, torch.rand(1, 3, 4, 2, requires_grad=True) * 2 - 1, '
    'align_corners=False).sum().backward()',
    'torch.nn.functional.affine_grid(torch.randn(2, 2, 3, requires_grad=True), [2, 1, 3, 4], '
    'align_corners=False).sum().backward()',
    'torch.nn.functional.embedding_bag(bags, emb, starts, mode="sum", '
    'per_sample_weights=torch.rand(4, requires_grad=True)).sum().backward()',
    'torch.nn.functional.embedding_bag(bags, emb.detach(), starts)',
    # F.fold's col2im: unfold's OpInfo samples reach im2col and (backward) col2im only on some inputs
    'torch.nn.functional.fold(torch.randn(1, 8, 16, requires_grad=True), (5, 5), 2).sum().backward()',
]


def _convert(value):
    """A torch argument as internals takes it."""
    if isinstance(value, torch.device):
        return internals.device(str(value))
    if isinstance(value, torch.Generator):
        return internals.Generator().manual_seed(0)
    if isinstance(value, torch.memory_format):
        return getattr(internals, str(value).split(".")[1])
    if value is torch.strided:
        return internals.strided
    if isinstance(value, dict):
        return {k: _convert(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        converted = [_convert(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    return to_ours(value)


def _overload(name):
    base, _, overload = name.split("::")[1].partition(".")
    return getattr(getattr(ops.aten, base), overload or "default")


def _variants():
    """functional name -> its in-place and out= names, by the signature torchgen gives all three."""
    by_signature = {}
    for name, op in dispatcher.operators.items():
        if op.schema is not None and name.startswith("aten::"):
            by_signature.setdefault(str(op.schema.signature()), {})[op.schema.kind()] = name
    variants = {}
    for kinds in by_signature.values():
        if SchemaKind.functional in kinds:
            variants[kinds[SchemaKind.functional]] = (kinds.get(SchemaKind.inplace), kinds.get(SchemaKind.out))
    return variants


def _metadata(value):
    if isinstance(value, internals.Tensor):
        return (tuple(value.shape), value.stride(), value.storage_offset(), value.dtype, value.device)
    if isinstance(value, (tuple, list)):
        return tuple(_metadata(v) for v in value)
    return value


def _clone_tensors(value):
    return internals.utils._pytree.tree_map(
        lambda t: t.clone() if isinstance(t, internals.Tensor) else t, value)


def _check(name, args, kwargs, mismatches):
    """Run ``name`` for real and on fakes of the same arguments; a disagreement is added to
    ``mismatches``. Returns False where the real kernel refuses the arguments (nothing to compare)."""
    with internals.no_grad():      # metadata is decided below autograd; out= refuses inputs that need grad
        return _check_below_autograd(name, args, kwargs, mismatches)


def _written(result, kwargs):
    """What a call gave: its result, or, for an out= form that returns nothing (the foreach
    ones), the ``out`` list it wrote."""
    return kwargs["out"] if result is None and "out" in kwargs else result


def _check_below_autograd(name, args, kwargs, mismatches):
    func = _overload(name)
    real_kwargs = _clone_tensors(kwargs)
    try:
        real = _written(func(*_clone_tensors(args), **real_kwargs), real_kwargs)
    except Exception:
        return False
    mode = FakeTensorMode()
    fake_args, fake_kwargs = internals.utils._pytree.tree_map(
        lambda t: mode.from_tensor(t) if isinstance(t, internals.Tensor) else t,
        (_clone_tensors(args), _clone_tensors(kwargs)))
    try:
        with mode:
            fake = _written(func(*fake_args, **fake_kwargs), fake_kwargs)
    except Exception as e:
        mismatches.append(f"{name}: the fake run raised {type(e).__name__}: {e}")
        return True
    if _metadata(fake) != _metadata(real):
        mismatches.append(f"{name}: fake {_metadata(fake)} != real {_metadata(real)}")
    return True


def _out_args(name, real):
    """``out=`` tensors for ``name``'s out overload: empty ones of the functional result's dtypes."""
    outs = real if isinstance(real, (tuple, list)) else (real,)
    names = [a.name for a in dispatcher.operators[name].schema.arguments.out]
    return {n: internals.empty(0, dtype=t.dtype) for n, t in zip(names, outs)}


def _check_all(calls, cases_per_operator=CASES_PER_OPERATOR):
    """The names of the operators checked, and the mismatches found."""
    checked, mismatches, variants = set(), [], _variants()
    cases, tries = collections.Counter(), collections.Counter()
    for name, args, kwargs in calls:
        if (name not in dispatcher.operators or name.split("::")[1] in NOT_CHECKED
                or tries[name] >= 3 * CASES_PER_OPERATOR):
            continue
        # enough cases once the operator and its in-place and out= forms have each been checked
        if cases[name] >= cases_per_operator and set(variants.get(name, ())) - {None} <= checked:
            continue
        tries[name] += 1
        try:
            ours = _convert((args, kwargs))
        except (Unsupported, RuntimeError, ValueError):   # a dtype internals lacks, a storage torch freed
            continue
        if not _check(name, *ours, mismatches):
            continue
        checked.add(name)
        cases[name] += 1
        inplace, out = variants.get(name, (None, None))
        if inplace and _check(inplace, *ours, mismatches):
            checked.add(inplace)
        if out:
            with internals.no_grad():
                real = _overload(name)(*_clone_tensors(ours[0]), **_clone_tensors(ours[1]))
            if _check(out, ours[0], {**ours[1], **_out_args(out, real)}, mismatches):
                checked.add(out)
    return checked, mismatches


def _direct_cases():
    """Operators torch's recording cannot show: out= forms of operators torch decomposes before
    dispatch (``absolute`` is ``abs`` there), and a few torch reaches through other overloads.
    (name, args, kwargs) in internals' terms; out= tensors start empty."""
    rng = np.random.default_rng(0)
    x = internals.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    v = internals.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    square = internals.tensor(rng.standard_normal((3, 3)).astype(np.float32))
    img, w = internals.ones(1, 2, 5, 5), internals.ones(3, 2, 3, 3)
    unary = ("absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "fix", "negative", "msort",
             "diff")
    cases = [(f"aten::{n}.out", (x,), {}) for n in unary]
    cases += [(f"aten::{n}.out", (x, x), {}) for n in ("multiply", "subtract", "true_divide", "kron")]
    cases += [(f"aten::{n}.out", ([x, x],), {}) for n in ("column_stack", "dstack", "concat", "concatenate", "hstack",
                                                          "vstack", "row_stack")]
    cases += [("aten::cross.out", (v, v), {"dim": 1}), ("aten::take_along_dim.out", (x, x.argsort(1)), {"dim": 1}),
              ("aten::tensordot.out", (x, v, [1], [0]), {}), ("aten::matrix_power.out", (square, 2), {}),
              ("aten::linalg_matrix_power.out", (square, 3), {})]
    # torch.linalg's and torch.special's compositions: torch records the operators they call, not their out= forms
    cases += [("aten::linalg_cond.out", (square,), {}), ("aten::linalg_cond.p_str_out", (square, "fro"), {}),
              ("aten::linalg_matrix_norm.out", (x, 1), {}), ("aten::linalg_matrix_norm.str_ord_out", (x, "nuc"), {}),
              ("aten::linalg_norm.out", (x, 2), {}), ("aten::linalg_norm.ord_str_out", (x, "fro"), {}),
              ("aten::linalg_multi_dot.out", ([x, v, x],), {}), ("aten::linalg_vecdot.out", (x, x), {}),
              ("aten::special_logsumexp.out", (x, [1]), {}), ("aten::special_ndtr.out", (x,), {}),
              # the older torch.lu_solve: linalg_lu_solve with its arguments reordered
              ("aten::lu_solve.out", (v[:3], square + 4 * internals.eye(3), internals.tensor([1, 2, 3],
                                                                                         dtype=internals.int32)), {})]
    # torch.special's structured kernels (their OpInfos are in the skipped family), with their out= forms
    unary = ("special_i0e", "special_i1", "special_i1e", "special_erfcx", "special_ndtri", "special_log_ndtr")
    cases += [(f"aten::{n}{overload}", (x,), {}) for n in unary for overload in ("", ".out")]
    # xlog1py and zeta, with their Scalar overloads (a number on either side)
    cases += [(f"aten::special_{n}{overload}", args, {}) for n in ("xlog1py", "zeta")
              for overload, args in (("", (x, x)), (".out", (x, x)), (".self_scalar", (2.0, x)),
                                     (".other_scalar", (x, 2.0)), (".self_scalar_out", (2.0, x)),
                                     (".other_scalar_out", (x, 2.0)))]
    cases += [("aten::polygamma_", (x.abs() + 1, 2), {})]      # torch's recording reaches polygamma.out only
    cases = [(name, args, {**kwargs, **_empty_outs(name)}) for name, args, kwargs in cases]
    # isin with a number on either side (torch's OpInfo samples are Tensor/Tensor only); a bool out
    flags = {"out": internals.empty(0, dtype=internals.bool)}
    cases += [("aten::isin.Tensor_Scalar", (x, 2.0), {}), ("aten::isin.Tensor_Scalar_out", (x, 2.0), flags),
              ("aten::isin.Scalar_Tensor", (2.0, x), {}), ("aten::isin.Scalar_Tensor_out", (2.0, x), flags)]
    ranks = {"out": internals.empty(0, dtype=internals.int64)}
    cases += [("aten::linalg_matrix_rank.out", (x, 0.1), ranks),
              ("aten::linalg_matrix_rank.out_tol_tensor", (x, internals.tensor(0.1)), ranks),
              ("aten::linalg_matrix_rank.atol_rtol_float_out", (x,), {"atol": 0.1, **ranks}),
              ("aten::linalg_matrix_rank.atol_rtol_tensor_out", (x,), ranks)]
    return cases + [
        ("aten::_conj_physical", (internals.complex(x, x),), {}), ("aten::_conj_physical", (x,), {}),
        ("aten::conj_physical_", (internals.complex(x, x),), {}), ("aten::_conj", (internals.complex(x, x),), {}),
        ("aten::_neg_view", (x,), {}),
        # reshape's view of a strided tensor: torch records view instead while a mode is on
        ("aten::_reshape_alias", (x.t(), [x.shape[1], x.shape[0]], [1, x.shape[1]]), {}),
        ("aten::conj_physical.out", (x,), _empty_outs("aten::conj_physical.out")),
        ("aten::view_as_real", (internals.complex(x, x),), {}),
        # polar's composite kernel calls its out= form below the mode that records torch's calls
        ("aten::polar.out", (x.abs(), x), {"out": internals.empty(0, dtype=internals.complex64)}),
        ("aten::convolution", (img, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1), {}),
        # torch's OpInfo samples reach batch norm through native_batch_norm and the mutating
        # _native_batch_norm_legit; its other overloads run only under the Python dispatcher
        ("aten::_native_batch_norm_legit.no_stats", (v, None, None, True, 0.1, 1e-5), {}),
        ("aten::_native_batch_norm_legit_no_training", (v, x[0, :3], x[1, :3], x[2, :3], x[2, :3].abs(), 0.1, 1e-5),
         {}),
        ("aten::div.Scalar_mode", (x, 2.0), {"rounding_mode": "floor"}),
        ("aten::div_.Scalar_mode", (x, 2.0), {"rounding_mode": "trunc"}),
        ("aten::floor_divide.Scalar", (x, 2), {}), ("aten::floor_divide_.Scalar", (x, 2), {}),
        # eigenvalues alone: torch's recording differentiates eigvals, which then calls linalg_eig
        ("aten::_linalg_eigvals", (square,), {}),
        # the fused weight norm and its backward, which torch's autograd calls below the dispatcher
        ("aten::_weight_norm_interface", (x, internals.ones(3, 1), 0), {}),
        ("aten::_weight_norm_interface_backward", (x, x, internals.ones(3, 1), internals.ones(3, 1), 0), {}),
        # oneDNN's LSTM layer (nn.LSTM's float32 path) and its backward, called below the dispatcher
        *_lstm_layer_cases(),
        # index_put_ as index's backward calls it (torch records it below the mode), and its functional form
        ("aten::_index_put_impl_", (internals.zeros(3, 2), [internals.tensor([0, 2, 2])], internals.ones(3, 2), True,
                                    True), {}),
        ("aten::_index_put_impl", (x, [internals.tensor([1, 0])], internals.ones(2, 4), False, False), {}),
        # orgqr's out= form (torch records only linalg_householder_product's)
        ("aten::orgqr.out", (x.t().contiguous(), internals.ones(2)), {"out": internals.empty(0)}),
        # norm with a dtype: torch's Python norm sends a dtype to linalg.vector_norm, so no sample records these
        ("aten::norm.ScalarOpt_dtype", (x, 2), {"dtype": internals.float64}),
        ("aten::norm.ScalarOpt_dim_dtype", (x, 3, [1], True), {"dtype": internals.float64}),
        ("aten::norm.dtype_out", (x, 1, [0], False),
         {"dtype": internals.float64, "out": internals.empty(0, dtype=internals.float64)}),
        # the anti-aliased resizes torch's meta registrations leave out (bilinear's is recorded)
        *[(f"aten::_upsample_{mode}2d_aa", (img, [3, 3], False), {}) for mode in ("bicubic", "lanczos")],
        *[(f"aten::_upsample_{mode}2d_aa_backward", (internals.ones(1, 2, 3, 3), [3, 3], [1, 2, 5, 5], False), {})
          for mode in ("bicubic", "lanczos")],
        # and their out= overloads, the primary (structured) kernels
        *[(f"aten::_upsample_{mode}2d_aa.out", (img, [3, 3], False), {"out": internals.empty(0)})
          for mode in ("bicubic", "lanczos")],
        *[(f"aten::_upsample_{mode}2d_aa_backward.grad_input",
           (internals.ones(1, 2, 3, 3), [3, 3], [1, 2, 5, 5], False), {"grad_input": internals.empty(0)})
          for mode in ("bicubic", "lanczos")],
        # channel_shuffle's CPU kernel calls native_channel_shuffle below the recording mode; rrelu's
        # training path (OpInfo samples run it in eval mode), its slopes drawn into a noise tensor
        ("aten::native_channel_shuffle", (internals.ones(1, 4, 2, 2), 2), {}),
        ("aten::rrelu_with_noise", (x, internals.empty(3, 4), 0.1, 0.3, True), {}),
        ("aten::rrelu_with_noise_", (x.clone(), internals.empty(3, 4), 0.1, 0.3, True), {}),
        ("aten::rrelu_with_noise.out", (x, internals.empty(3, 4), 0.1, 0.3, True), {"out": internals.empty(0)}),
        # pdist's backward: its OpInfo samples record the forward only
        ("aten::_pdist_backward", (internals.ones(3), x, 2.0, internals.ones(3)), {}),
        # conv_tbc: no OpInfo in torch; its backward is reached only from its node
        ("aten::conv_tbc", (internals.ones(5, 2, 3), internals.ones(2, 3, 4), internals.ones(4), 1), {}),
        ("aten::conv_tbc_backward", (internals.ones(6, 2, 4), internals.ones(5, 2, 3), internals.ones(2, 3, 4),
                                     internals.ones(4), 1), {})] \
        + _embedding_bag_cases() + _flash_attention_cases() \
        + _ctc_loss_cases() + _foreach_cases()


def _foreach_cases():
    """Every multi-tensor operator (torch's recording of them is not in OpInfo's first samples):
    lists of two tensors of different layouts, a 0-dim tensor for a Tensor number (a 1-d one of
    two for addcmul's and addcdiv's packed scalars), two numbers for a scalar list; pairs of
    matrices that multiply for mm; two empty tensors for an ``out`` list."""
    def lists():
        return [internals.arange(1.0, 13.0).reshape(3, 4).t(), internals.arange(1.0, 4.0)]

    def argument(a, name):
        kind = str(a.type).replace("(a!)", "")
        if name == "_foreach_mm":
            return ([internals.ones(3, 4).t(), internals.ones(2, 3)] if a.name == "self"
                    else [internals.ones(3, 2), internals.ones(3, 5).t().t()])
        if kind == "Tensor[]":
            return lists()
        if kind == "Tensor":
            return internals.tensor([0.5, 2.0]) if name.startswith(("_foreach_addc",)) else internals.tensor(0.5)
        return [0.5, 2.0] if kind == "Scalar[]" else 0.5
    return [(name, tuple(argument(a, name.split("::")[1]) for a in op.schema.arguments.flat_positional
                         if a.default is None),
             {a.name: [internals.empty(0), internals.empty(0)] for a in op.schema.arguments.out})
            for name, op in dispatcher.operators.items() if name.startswith("aten::_foreach_") and op.schema]


def _flash_attention_cases():
    """The CPU's fused attention and its backward: OpInfo's first samples of
    scaled_dot_product_attention are not the 4-d inputs that reach it. The query laid out with
    heads after the length, the key/value with fewer heads (grouped-query), a mask and causal."""
    rng = np.random.default_rng(1)
    q = internals.tensor(rng.standard_normal((2, 5, 4, 8)).astype(np.float32)).transpose(1, 2)
    kv = internals.tensor(rng.standard_normal((2, 2, 6, 8)).astype(np.float32))
    mask = internals.zeros(5, 6)
    name = "aten::_scaled_dot_product_flash_attention_for_cpu"
    out, lse = dispatcher.call(name.split("::")[1], q, kv, kv, 0.0, True, attn_mask=mask)
    return [(name, (q, kv, kv), {}), (name, (q, kv, kv, 0.0, True), {"attn_mask": mask, "scale": 0.5}),
            (name + "_backward", (internals.ones(2, 4, 5, 8), q, kv, kv, out, lse, 0.0, True), {"attn_mask": mask})]


def _ctc_loss_cases():
    """The CTC loss's backward with the lengths as tensors (torch's composite reads them on the
    host and records the list overload only)."""
    log_probs = internals.log_softmax(internals.arange(24.0).reshape(3, 2, 4).sin(), 2)
    targets, lengths = internals.tensor([[1, 2], [3, 3]]), (internals.tensor([3, 2]), internals.tensor([2, 1]))
    nll, log_alpha = internals._ctc_loss(log_probs, targets, [3, 2], [2, 1])
    return [("aten::_ctc_loss_backward.Tensor", (internals.ones(2), log_probs, targets, *lengths, nll, log_alpha, 0),
             {})]


def _embedding_bag_cases():
    """The backward operators of a bag of embeddings, which torch's CPU autograd calls below the
    dispatcher a recording mode sees."""
    grad, weight = internals.ones(2, 3), internals.ones(5, 3)
    indices, offsets = internals.tensor([1, 2, 4, 3]), internals.tensor([0, 2])
    offset2bag, bag_size = internals.tensor([0, 0, 1, 1]), internals.tensor([2, 2])
    return [("aten::_embedding_bag_backward", (grad, indices, offsets, offset2bag, bag_size, bag_size, 5, False, 1,
                                               False, None, -1), {}),
            ("aten::_embedding_bag_dense_backward", (grad, indices, offset2bag, bag_size, bag_size, 5, False, 0,
                                                     internals.ones(4), -1), {}),
            ("aten::_embedding_bag_per_sample_weights_backward", (grad, weight, indices, offsets, offset2bag, 0, -1),
             {})]


def _empty_outs(name):
    return {a.name: internals.empty(0) for a in dispatcher.operators[name].schema.arguments.out}


def _has_kernel(op):
    return bool(KERNEL_KEYS & {str(k) for k in op.kernels})


@pytest.fixture(scope="module")
def recorded_calls():
    return _recorded_calls()


def _check_everything(calls, cases_per_operator):
    checked, mismatches = _check_all(calls, cases_per_operator)
    for name, args, kwargs in _direct_cases():
        if _check(name, args, kwargs, mismatches):
            checked.add(name)
    return checked, mismatches


@pytest.fixture(scope="module")
def first_cases(recorded_calls):
    """Each operator checked on its first case the real kernel accepts: enough to prove the
    coverage quickly. Every case is compared in the slow test (`make test-slow`)."""
    return _check_everything(recorded_calls, cases_per_operator=1)


@pytest.fixture(scope="module")
def checked(first_cases):
    return first_cases[0]


def _assert_no_mismatches(mismatches):
    mismatches = sorted(set(mismatches))
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:60])


def test_fake_metadata_equals_the_real_kernels_on_first_cases(first_cases):
    _assert_no_mismatches(first_cases[1])


@pytest.mark.slow
def test_fake_metadata_equals_the_real_kernels(recorded_calls):
    _assert_no_mismatches(_check_everything(recorded_calls, CASES_PER_OPERATOR)[1])


def test_every_operator_with_a_kernel_was_checked(checked):
    with_kernel = {name.split("::")[1] for name, op in dispatcher.operators.items()
                   if name.startswith("aten::") and _has_kernel(op)}
    unchecked = sorted(with_kernel - {n.split("::")[1] for n in checked} - set(NOT_CHECKED))
    assert not unchecked, f"{len(unchecked)} operators with a kernel never checked on fakes: {unchecked}"


def test_the_list_of_unchecked_operators_is_not_stale(checked):
    assert not {n.split("::")[1] for n in checked} & set(NOT_CHECKED)
    assert set(NOT_CHECKED) <= {name.split("::")[1] for name in dispatcher.operators}


@pytest.mark.parametrize("program", [
    lambda lib, x: x.nonzero(), lambda lib, x: x.masked_select(x > 0), lambda lib, x: x[x > 0],
    lambda lib, x: lib.unique(x), lambda lib, x: x.long().abs().bincount(),
    lambda lib, x: lib.linalg.lstsq(x.unsqueeze(-1), x, driver="gelsd")])
def test_values_decide_the_shape_so_fakes_refuse(program):
    x = internals.tensor([1.0, -2.0, 3.0])
    with FakeTensorMode() as mode, pytest.raises(DynamicOutputShapeException):
        program(internals, mode.from_tensor(x))


def test_reading_a_value_refuses():
    with FakeTensorMode() as mode, pytest.raises(DataDependentOutputException):
        mode.from_tensor(internals.ones(2)).sum().item()


def test_a_fake_run_draws_no_random_numbers():
    internals.manual_seed(0)
    with FakeTensorMode() as mode:
        mode.from_tensor(internals.zeros(3)).uniform_()
        internals.rand(4, 4), internals.randperm(5)
    assert internals.rand(2).tolist() == (internals.manual_seed(0), internals.rand(2).tolist())[1]
