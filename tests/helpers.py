"""What the test files share: comparisons with torch, OpInfo sample runners, snippet harnesses.

Tests import from here (``from helpers import ...``); pytest puts ``tests`` on the path
(``pythonpath`` in pyproject.toml). Fixtures stay in conftest.py."""
import contextlib
import functools
import io
import itertools
import math
import operator
import re
import sys
import threading
import types
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import torchgen
import yaml
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import noncontiguous_like
from torch.utils._python_dispatch import TorchDispatchMode
from torchgen.model import FunctionSchema

import internals
from internals._subclasses.fake_tensor import FakeTensorMode
from internals.aten import dispatcher
from internals.aten.register_native_functions import NATIVE_FUNCTIONS
from internals.c10.dispatch_key import DispatchKey

# internals dtype <-> torch dtype, for the ten dtypes the course covers.
DTYPE_PAIRS = [(getattr(internals, n), getattr(torch, n)) for n in
               ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")]


TO_TORCH = {ours: theirs for ours, theirs in DTYPE_PAIRS}


TO_INTERNALS = {theirs: ours for ours, theirs in DTYPE_PAIRS}


# Where torch's last bits follow the CPU, results are compared within these units in the last
# place (``internals.testing.assert_within_ulps``; CONTRIBUTING.md says which ops are which).
# A library math function: SLEEF's vectorised 1-ulp functions or the C library's, by CPU path.
LIBM_ULPS = 2


# A BLAS product or a vector-width reduction order: its sums group differently on each path.
PRODUCT_ULPS = 4


# A complex power, logarithm or trigonometric function: torch's vector path or std::complex by
# capability, fused multiply-adds where the CPU has them; a power's exponent amplifies the
# rounding of its logarithm (complex64 ** 2.5 of |z| ~ 1e3 is 12 ulps apart between paths).
COMPLEX_ULPS = 32


# torch's own native_functions.yaml, as torchgen ships it.
TORCH_NATIVE_FUNCTIONS = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


@functools.cache
def native_schemas(path=NATIVE_FUNCTIONS):
    """A native_functions.yaml's entries and their parsed ``func`` schemas, by operator name
    (``name.overload``): {name: (entry, schema)}, read once a process with libyaml's loader where
    PyYAML has it (several times faster than ``yaml.safe_load``, the same objects), each schema
    parsed once for all the tests. They share the one dict: read it, never change it."""
    entries = yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    parsed = ((e, FunctionSchema.parse(e["func"])) for e in entries)
    return {str(schema.name): (e, schema) for e, schema in parsed}


@functools.cache
def native_entries(path=NATIVE_FUNCTIONS):
    """A native_functions.yaml's entries by operator name (``name.overload``), from
    :func:`native_schemas`. The tests share the one dict: read it, never change it."""
    return {name: entry for name, (entry, _) in native_schemas(path).items()}


def assert_derived_from_structured_out(name, out, module):
    """``name`` is declared as torch declares a structured family: its YAML entry delegates to the
    structured ``name.out`` overload (``out`` names it: ``out``, ``output``, ``grad_input``; an
    overloaded ``scatter.src`` and ``scatter_.src`` to ``scatter.src_out``), whose meta and impl steps live in
    ``module``, and its CPU kernel is that meta step, wrapped (the functional form derived from out=)."""
    entries = native_entries()
    base, _, overload = name.partition(".")
    base = base.removesuffix("_")          # an in-place form delegates to its functional's out=
    out_name = f"{base}.{overload}_{out}" if overload else f"{base}.{out}"
    assert entries[name]["structured_delegate"] == out_name and entries[out_name]["structured"]
    out_kernel = dispatcher.find(out_name).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta
    assert out_kernel.meta.__module__ == module.__name__ and out_kernel.impl.__name__.startswith("impl_")


def assert_same(ours, theirs, *, exact_layout=True, rtol=None, atol=None, ulps=None):
    """Values, shape, strides, storage offset and dtype of an internals tensor equal torch's
    (the values within ``ulps`` units in the last place when given)."""
    internals.testing.check(ours, theirs, exact_layout=exact_layout, rtol=rtol, atol=atol, ulps=ulps)


def assert_within_ulps_of_largest(ours, theirs, n, *, exact_layout=True):
    """``assert_same`` with every value within ``n`` units in the last place of the largest
    magnitude in ``theirs``: for sums of products whose terms cancel (an attention output, its
    gradients), where one element's own ulp is no scale for the rounding of the others."""
    largest = theirs.detach().abs().max().item() if theirs.numel() else 0.0
    assert_same(ours, theirs, exact_layout=exact_layout, rtol=0,
                atol=n * torch.finfo(theirs.dtype).eps * largest)


def assert_same_error(fn_ours, fn_theirs):
    """Both raise, and with the same exception class (RuntimeError, IndexError, ...)."""
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(Exception) as ours:
        fn_ours()
    assert type(ours.value) is type(theirs.value), (
        f"internals raised {type(ours.value).__name__}: {ours.value}\n"
        f"torch raised {type(theirs.value).__name__}: {theirs.value}")
    return ours.value, theirs.value


def both_with_warnings(fn):
    """``fn(lib)`` for torch and for internals, each with the classes of the warnings it raised."""
    results = []
    for lib in (torch, internals):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append((fn(lib), [w.category for w in caught]))
    return results


def assert_out_variant_matches_torch(program):
    """``program(lib)`` (an ``out=`` call) gives torch's result, layout included, with the same
    warnings (a resized non-empty ``out`` warns)."""
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(program)
    assert_same(ours, theirs)
    assert our_warnings == their_warnings


def assert_ops_out_resized_with_torchs_warning(program, capfd):
    """``program(lib)`` (an ``out=`` call through ``lib.ops.aten``, for operators torch binds
    nowhere else) resizes a wrong-sized ``out`` and gives torch's result. torch's ``torch.ops``
    calls report the resize warning through c10's handler, on stderr; internals' raise it as a
    UserWarning in the same words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = program(internals)
    capfd.readouterr()
    assert_same(ours, program(torch))
    (warning,) = caught
    assert warning.category is UserWarning
    assert f"Warning: {warning.message} (function _resize_output_check)" in capfd.readouterr().err


def _matrix():
    return (internals.arange(12.).reshape(4, 3),)


def assert_fake_matches_real(program, operands=_matrix):
    """``program(internals, *operands())`` run on fake tensors gives outputs of the real run's
    shape, strides and dtype (each output, when it returns several): the meta step alone lays
    them out, as torch's FakeTensorMode needs (``torch/_subclasses/fake_tensor.py``).
    ``operands`` makes fresh tensors, since a program may write in place."""
    real = program(internals, *operands())
    with FakeTensorMode() as mode:
        fake = program(internals, *(mode.from_tensor(t) for t in operands()))
    if not isinstance(real, tuple):
        real, fake = (real,), (fake,)
    for f, r in zip(fake, real, strict=True):
        assert (f.shape, f.stride(), f.dtype) == (r.shape, r.stride(), r.dtype)


def same_error(fn):
    """``fn(lib)`` raises the same class with the same message in both libraries."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours) == str(theirs)


def same_or_same_error(fn):
    """``fn(lib)`` raises the same error in both libraries, or gives the same tensor (or the same
    tensors and other values) with the same layout. Warnings are not compared here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = fn(torch)
        except Exception:
            return same_error(fn)
        ours = fn(internals)
    if isinstance(theirs, torch.Tensor):
        return assert_same(ours, theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, torch.Tensor):
            assert_same(o, t)
        else:
            assert o == t


def logging_modes(log_t, log_i):
    """The classic operation-logger mode, once for torch and once for internals: each appends
    ``str(func)`` of every operator it sees to its list."""
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from internals.utils._python_dispatch import TorchDispatchMode

    class Theirs(TorchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log_t.append(str(func))
            return func(*args, **(kwargs or {}))

    class Ours(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log_i.append(str(func))
            return func(*args, **(kwargs or {}))
    return Theirs(), Ours()


def dispatch_table(dump):
    """{key: (fallthrough?, kind)} from a printed dispatch table (``_dispatch_dump_table``)."""
    out = {}
    for line in dump.strip().splitlines():
        key, rest = line.split(": ", 1)
        out[key] = (rest.startswith("fallthrough"), rest.rsplit("[", 1)[1].rstrip("]"))
    return out


def in_threads(work, n=4):
    """Run ``work(k)`` on ``n`` threads at a one-microsecond switch interval; the exceptions they raised."""
    errors, barrier = [], threading.Barrier(n)

    def body(k):
        barrier.wait()
        try:
            work(k)
        except Exception as e:      # noqa: BLE001 - every failure is reported by the test
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


TORCH_DTYPES = [theirs for _, theirs in DTYPE_PAIRS]


@contextlib.contextmanager
def torch_on_one_thread():
    """torch's intra-op thread pool held to one thread while small inputs run through torch.

    Some of torch's CPU kernels split even a 5x5 input between their OpenMP threads (softmax,
    max/min over a dim): the calling thread then spins until the others are scheduled, which on
    a busy 2-core machine running two pytest workers costs ~8 ms of CPU a call against ~3 us on
    one thread. The test inputs are far below torch's grain size (32768 elements), where no
    kernel's result depends on how many threads share the work: the same values either way.
    (Where an order matters, it also fixes the one: max_unpool's repeated indices keep the last
    value written only when one thread writes them in order, ``tests/nn/test_unpooling.py``.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


class Unsupported(Exception):
    """A sample uses a feature internals does not implement; it is counted as skipped."""


@dataclass
class Adapter:
    """How internals spells one OpInfo.

    ``ours(input, *args, **kwargs)`` is compared with ``op.op`` (torch's function variant);
    ``method`` names the internals method compared with ``op.method_variant``, if both exist.
    ``kwargs`` lists the keyword arguments internals accepts for this op: a sample passing any
    other keyword is skipped. ``min_ran`` is the fraction of samples that must actually run.
    ``tol`` maps a torch dtype to the (rtol, atol) used instead of assert_close's defaults.
    """
    ours: object
    method: str = None
    kwargs: tuple = ()
    min_ran: float = 1.0
    tol: dict = None


# add/sub with alpha != 1 in float16/bfloat16: torch's vectorised CPU loop computes
# a + alpha * b in float32 and rounds once, as internals does, but its scalar loop (the tail of
# each thread's chunk, or a whole small tensor) first rounds alpha * b to the 16-bit type. With
# OpInfo's values (|alpha * b| < 32) that extra rounding is at most half an ulp at 32, 2^-7
# (float16) or 2^-4 (bfloat16); exact agreement for alpha == 1 is tested further down.
ADD_ALPHA_TOL = {torch.float16: (1e-3, 2 ** -7), torch.bfloat16: (1.6e-2, 2 ** -4)}


# Matrix products: torch's BLAS sums the K products in another order than internals' loop. With
# OpInfo's values in [-9, 9] and K <= 20, float32 results differ by up to ~K * 81 * 2^-24 ~ 1e-4
# near cancellation; torch's own OpInfo uses the same override (matmul, test_noncontiguous_samples).
MATMUL_TOL = {torch.float32: (1.3e-6, 1e-4)}


# torch's CPU log_softmax over the last dim rounds the sum of exponentials to float16/bfloat16
# before taking its log (internals keeps it in float32, as torch's other-dim kernel does), so
# log(sum) may be off by that rounding: up to one ulp at 1.0 of the 16-bit type, absolute.
LOG_SOFTMAX_TOL = {torch.float16: (1e-3, 2 ** -10), torch.bfloat16: (1.6e-2, 2 ** -7)}


def fn(name):
    """The internals module function ``internals.<name>``."""
    return getattr(internals, name)


def meth(name):
    """Call the internals method ``input.<name>(...)``."""
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


REDUCE_KW = ("dim", "keepdim")


# op_db name (".variant" when it has one) -> how internals runs it.
ADAPTERS = {
    # unary
    "neg": Adapter(fn("neg"), "neg"),
    "abs": Adapter(fn("abs"), "abs"),
    "exp": Adapter(fn("exp"), "exp"),
    "log": Adapter(fn("log"), "log"),
    "sqrt": Adapter(fn("sqrt"), "sqrt"),
    "nn.functional.relu": Adapter(fn("relu")),       # torch.nn.functional.relu is aten::relu
    "sigmoid": Adapter(fn("sigmoid"), "sigmoid"),
    "tanh": Adapter(fn("tanh"), "tanh"),
    # binary
    "add": Adapter(fn("add"), "add", kwargs=("alpha",), tol=ADD_ALPHA_TOL),
    "sub": Adapter(fn("sub"), "sub", kwargs=("alpha",), tol=ADD_ALPHA_TOL),
    "mul": Adapter(fn("mul"), "mul"),
    "div.no_rounding_mode": Adapter(fn("div"), "div"),
    "pow": Adapter(fn("pow"), "pow"),
    "maximum": Adapter(fn("maximum"), "maximum"),
    "minimum": Adapter(fn("minimum"), "minimum"),
    "max.binary": Adapter(fn("max"), "max"),
    "min.binary": Adapter(fn("min"), "min"),
    "eq": Adapter(fn("eq"), "eq"),
    "ne": Adapter(fn("ne"), "ne"),
    "lt": Adapter(fn("lt"), "lt"),
    "le": Adapter(fn("le"), "le"),
    "gt": Adapter(fn("gt"), "gt"),
    "ge": Adapter(fn("ge"), "ge"),
    # OpInfo's sample input is where's `self` (the values taken where the condition holds).
    "where": Adapter(lambda x, condition, other: internals.where(condition, x, other)),
    # reductions
    "sum": Adapter(fn("sum"), "sum", kwargs=REDUCE_KW + ("dtype",)),
    "mean": Adapter(fn("mean"), "mean", kwargs=REDUCE_KW + ("dtype",)),
    "prod": Adapter(fn("prod"), "prod", kwargs=REDUCE_KW + ("dtype",)),
    "amax": Adapter(fn("amax"), "amax", kwargs=REDUCE_KW),
    "amin": Adapter(fn("amin"), "amin", kwargs=REDUCE_KW),
    "max.reduction_with_dim": Adapter(fn("max"), "max", kwargs=REDUCE_KW),
    "max.reduction_no_dim": Adapter(fn("max"), "max"),
    "min.reduction_with_dim": Adapter(fn("min"), "min", kwargs=REDUCE_KW),
    "min.reduction_no_dim": Adapter(fn("min"), "min"),
    "argmax": Adapter(fn("argmax"), "argmax", kwargs=REDUCE_KW),
    "argmin": Adapter(fn("argmin"), "argmin", kwargs=REDUCE_KW),
    # linear algebra and softmax
    "mm": Adapter(fn("mm"), "mm", tol=MATMUL_TOL),
    "bmm": Adapter(fn("bmm"), "bmm", tol=MATMUL_TOL),
    "matmul": Adapter(fn("matmul"), "matmul", tol=MATMUL_TOL),
    "softmax": Adapter(fn("softmax"), "softmax", kwargs=("dtype",)),
    "softmax.with_dtype": Adapter(fn("softmax"), "softmax", kwargs=("dtype",)),
    "log_softmax": Adapter(fn("log_softmax"), "log_softmax", kwargs=("dtype",), tol=LOG_SOFTMAX_TOL),
    "log_softmax.with_dtype": Adapter(fn("log_softmax"), "log_softmax", kwargs=("dtype",), tol=LOG_SOFTMAX_TOL),
    # copies and fills
    "clone": Adapter(fn("clone"), "clone"),
    "contiguous": Adapter(meth("contiguous"), "contiguous"),
    "fill": Adapter(lambda x, value: x.clone().fill_(value), kwargs=("value",)),   # torch.fill: a filled copy
    "zero_": Adapter(lambda x: x.clone().zero_()),
    # views
    "view": Adapter(meth("view"), "view"),
    "view_as": Adapter(meth("view_as"), "view_as"),
    "reshape": Adapter(fn("reshape"), "reshape"),
    "reshape_as": Adapter(meth("reshape_as"), "reshape_as"),
    "transpose": Adapter(fn("transpose"), "transpose"),
    "t": Adapter(fn("t"), "t"),
    "T": Adapter(lambda x: x.T),
    "mT": Adapter(lambda x: x.mT),
    "permute": Adapter(fn("permute"), "permute"),
    "movedim": Adapter(fn("movedim"), "movedim"),
    "expand": Adapter(meth("expand"), "expand"),
    "expand_as": Adapter(meth("expand_as"), "expand_as"),
    "broadcast_to": Adapter(fn("broadcast_to"), "broadcast_to"),
    "narrow": Adapter(fn("narrow"), "narrow"),
    "select": Adapter(fn("select"), "select"),
    "squeeze": Adapter(fn("squeeze"), "squeeze"),
    "squeeze.multiple": Adapter(fn("squeeze"), "squeeze"),
    "unsqueeze": Adapter(fn("unsqueeze"), "unsqueeze"),
    "flatten": Adapter(fn("flatten"), "flatten", kwargs=("start_dim", "end_dim")),
    "unflatten": Adapter(fn("unflatten"), "unflatten"),
    "diagonal": Adapter(fn("diagonal"), "diagonal", kwargs=("offset", "dim1", "dim2")),
    "unfold": Adapter(meth("unfold"), "unfold"),
    "split": Adapter(fn("split"), "split"),
    "split.list_args": Adapter(fn("split"), "split"),
    # internals spells split_with_sizes(sizes, dim) as split(sizes, dim), as torch.split does.
    "split_with_sizes": Adapter(lambda x, sizes, dim=0: internals.split(x, sizes, dim)),
    "chunk": Adapter(fn("chunk"), "chunk"),
    "as_strided": Adapter(fn("as_strided"), "as_strided", kwargs=("storage_offset",)),
    "as_strided.partial_views": Adapter(fn("as_strided"), "as_strided", kwargs=("storage_offset",)),
}


def opinfo_name(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


OPINFOS = {opinfo_name(op): op for op in op_db if opinfo_name(op) in ADAPTERS}


def to_ours(value):
    """A sample argument as internals takes it: tensors and dtypes converted, scalars kept."""
    if isinstance(value, torch.Tensor):
        if value.dtype not in TO_INTERNALS or value.layout != torch.strided:
            raise Unsupported(f"tensor of {value.dtype}, {value.layout}")
        return internals.from_torch(value)
    if isinstance(value, torch.dtype):
        if value not in TO_INTERNALS:
            raise Unsupported(f"dtype {value}")
        return TO_INTERNALS[value]
    if isinstance(value, (list, tuple)):   # torch.Size included: it becomes a plain tuple
        converted = [to_ours(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    if isinstance(value, complex):
        raise Unsupported("complex scalar")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise Unsupported(f"argument of type {type(value).__name__}")


def to_ours_with_complex(value):
    """``to_ours``, complex tensors too: for the tests of operators with complex kernels (the
    dtype table lists the real dtypes, so other OpInfo runs skip complex samples)."""
    if isinstance(value, torch.Tensor) and value.dtype.is_complex:
        return internals.from_torch(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_ours_with_complex(v) for v in value)
    return to_ours(value)


def assert_same_result(ours, theirs, tol=None):
    """Tensors, tuples of them (split, max's (values, indices)) or Python scalars."""
    if isinstance(theirs, torch.Tensor):
        rtol, atol = (tol or {}).get(theirs.dtype, (None, None))
        assert_same(ours, theirs, rtol=rtol, atol=atol)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{ours!r} vs {theirs!r}"
        fields = getattr(type(theirs), "__match_args__", None)   # torch.return_types.max: (values, indices)
        if fields:
            assert type(ours).__name__ == type(theirs).__name__ and tuple(ours._fields) == fields
        for o, t in zip(ours, theirs):
            assert_same_result(o, t, tol)
    else:
        assert ours == theirs


def assert_same_tree(ours, theirs, compare):
    """Nested dicts, lists and tuples of tensors and plain values (an ``outcome``): the same
    structure, plain values equal, and ``compare(our_tensor, torchs_tensor)`` for each tensor
    (``assert_same`` within some ulps, say)."""
    if isinstance(theirs, torch.Tensor):
        compare(ours, theirs)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), f"{ours!r} vs {theirs!r}"
        for key in theirs:
            assert_same_tree(ours[key], theirs[key], compare)
    elif isinstance(theirs, (list, tuple)):      # by name: torch.return_types.max and internals' are alike
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs), f"{ours!r} vs {theirs!r}"
        for o, t in zip(ours, theirs):
            assert_same_tree(o, t, compare)
    else:
        assert ours == theirs


def noncontiguous(value):
    """OpInfo's ``noncontiguous_like`` applied to every tensor of a sample."""
    if isinstance(value, torch.Tensor):
        return noncontiguous_like(value)
    if isinstance(value, list):
        return [noncontiguous(v) for v in value]
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        return tuple(noncontiguous(v) for v in value)
    return value


def compare_call(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    """Run both on one sample; where torch raises, internals must raise the same exception class."""
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    try:
        theirs = theirs_fn(x, *args, **kwargs)
    except Exception:
        assert_same_error(lambda: ours_fn(ours_x, *ours_args, **ours_kwargs), lambda: theirs_fn(x, *args, **kwargs))
        return
    assert_same_result(ours_fn(ours_x, *ours_args, **ours_kwargs), theirs, tol)


def opinfo_samples(op, dtype):
    """``op.sample_inputs("cpu", dtype)`` without its bookkeeping wrapper.

    The wrapper walks the whole call stack with ``inspect.stack()`` (reading the source line of
    every frame, ~0.1 s per call under pytest) to find a unittest test's name, which pytest
    tests do not have; it then only reseeds torch's generator before each sample. Seeding once
    here keeps the samples just as deterministic.
    """
    # sample values come from torch's global generator (seeded as the conftest fixture seeds it:
    # torch.manual_seed formats the caller's stack for absent devices' lazy seeds, ~2 ms here)
    torch.default_generator.manual_seed(0)
    return op.sample_inputs_func(op, "cpu", dtype, False)


def run_opinfo_samples(name, op, adapter, dtype, convert=to_ours, compare=None, step=1):
    """Compare every OpInfo sample of ``op`` at ``dtype`` (as given, then non-contiguous).

    Returns (ran, skipped, reasons). Each sample runs the function variant and, where both
    libraries have it, the method variant. ``convert`` turns torch's arguments into ours;
    ``compare(ours_fn, theirs_fn, given, ours, tol)`` checks one call (by default ``compare_call``).
    ``step`` > 1 takes every step-th sample only: for a sweep over dtypes whose samples all run
    the same loop, where another test runs the full set at one dtype (the caller says why).
    The OpInfo tests of the other operator files use this loop with their own adapters.
    """
    compare = compare or compare_call
    ran, skipped, reasons = 0, 0, set()
    for sample in itertools.islice(opinfo_samples(op, dtype), 0, None, step):
        for layout in ("as given", "non-contiguous"):
            x, args, kwargs = sample.input, sample.args, sample.kwargs
            if layout == "non-contiguous":
                x, args = noncontiguous(x), noncontiguous(args)
                kwargs = {k: noncontiguous(v) for k, v in kwargs.items()}
            try:
                extra = set(kwargs) - set(adapter.kwargs)
                if extra:
                    raise Unsupported(f"keyword {sorted(extra)}")
                ours = (convert(x), convert(tuple(args)), {k: convert(v) for k, v in kwargs.items()})
            except Unsupported as why:
                skipped += 1
                reasons.add(str(why))
                continue
            try:
                compare(adapter.ours, op.op, (x, args, kwargs), ours, adapter.tol)
                if adapter.method and op.method_variant is not None:
                    compare(meth(adapter.method), op.method_variant, (x, args, kwargs), ours, adapter.tol)
            except AssertionError as e:
                # The sample is printed only for a failure: the repr of its tensor arguments cost
                # a fifth of a passing OpInfo test's time when it was made for every sample.
                where = f"{name} {dtype} {layout}: input {getattr(x, 'shape', x)!r}, args {args!r}, kwargs {kwargs!r}"
                raise AssertionError(f"{where}\n{e}") from e
            ran += 1
    return ran, skipped, reasons


# Every OpInfo of torch's op_db by its test name: ``op.name``, then ``.variant`` where it has one
# ("max.reduction_with_dim", "nn.functional.pad.reflect").
OPINFO_BY_NAME = {opinfo_name(op): op for op in op_db}


def opinfos(names):
    """torch's OpInfo of each name in ``names`` (see ``OPINFO_BY_NAME``), failing on a name op_db lacks."""
    missing = set(names) - set(OPINFO_BY_NAME)
    assert not missing, f"not in op_db: {sorted(missing)}"
    return {name: OPINFO_BY_NAME[name] for name in names}


# Dtypes that run the same loops with another element type, where each (operator, dtype) pair
# compiles a loop of its own (about half a second of a cold run each): the integers narrower than
# int64, and complex64 beside complex128. The default tier runs each operator on one dtype of each
# group, chosen by the operator's name (so that across the operators every one runs), and
# ``make test-slow`` on the others.
NARROW_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32)
COMPLEX = (torch.complex64, torch.complex128)
ROTATED = (NARROW_INTEGERS, COMPLEX)


def rotated_cases(name, dtypes):
    """``pytest.param(name, dtype)`` for each of ``dtypes``, those of a ``ROTATED`` group that
    ``name`` does not pick marked slow."""
    kept = set(dtypes) - {d for group in ROTATED for d in group}
    for group in ROTATED:
        members = [d for d in dtypes if d in group]
        if members:
            kept.add(members[zlib.crc32(name.encode()) % len(members)])
    return [pytest.param(name, d, id=f"{name}-{str(d)[6:]}", marks=() if d in kept else pytest.mark.slow)
            for d in dtypes]


def opinfo_cases(names, dtypes, *, exclude=None):
    """``pytest.param(name, dtype)`` for each name and each of ``dtypes`` its OpInfo supports on the
    CPU; ``exclude`` maps a name to dtypes left out (the test file says why). Of each ``ROTATED``
    group of dtypes an operator has here, all but one are marked slow."""
    cases = []
    for name, op in opinfos(names).items():
        chosen = [d for d in dtypes if d in op.supported_dtypes("cpu") and d not in (exclude or {}).get(name, ())]
        cases += rotated_cases(name, chosen)
    return cases


def check_opinfo_samples(name, dtype, adapter, *, op=None, convert=to_ours, compare=None, step=1):
    """The OpInfo-samples test of one operator at one dtype.

    Runs ``run_opinfo_samples`` over torch's OpInfo ``op`` (by default the one ``name`` names in
    op_db) with warnings silenced (deprecations and broadcasting notices; the tests that compare
    warnings do so elsewhere), then requires that some sample ran and that at least
    ``adapter.min_ran`` of them did (all of them, by default: nothing skipped).
    Returns (ran, skipped, reasons).
    """
    op = op if op is not None else OPINFO_BY_NAME[name]
    with warnings.catch_warnings(), torch_on_one_thread():
        warnings.simplefilter("ignore")
        ran, skipped, reasons = run_opinfo_samples(name, op, adapter, dtype, convert=convert, compare=compare,
                                                   step=step)
    assert ran > 0 and ran >= adapter.min_ran * (ran + skipped), (
        f"{name} {dtype}: {ran} ran, {skipped} skipped for {sorted(reasons)}")
    return ran, skipped, reasons


def compare_into_empty_outs(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    """The functional call in torch says what ``out`` to give (dtype, and a tuple for two
    results); both libraries then write into empty outs, compared as the functional results are."""
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    try:
        expected = theirs_fn(x, *args, **kwargs)
    except Exception:     # noqa: BLE001 -- the functional call's errors are test_ops' business
        return
    results = expected if isinstance(expected, tuple) else (expected,)
    outs_t = tuple(torch.empty(0, dtype=r.dtype) for r in results)
    outs_i = tuple(internals.empty(0, dtype=getattr(internals, str(r.dtype)[6:])) for r in results)
    pick = (lambda outs: outs) if len(results) > 1 else (lambda outs: outs[0])
    theirs = theirs_fn(x, *args, **kwargs, out=pick(outs_t))
    ours = ours_fn(ours_x, *ours_args, **ours_kwargs, out=pick(outs_i))
    for r_t, r_i, o_t, o_i in zip(results if len(results) > 1 else (theirs,), ours if len(results) > 1 else (ours,),
                                  outs_t, outs_i):
        assert r_i is o_i and (r_t is o_t or len(results) > 1)
        rtol, atol = (tol or {}).get(o_t.dtype, (None, None))
        assert_same(o_i, o_t, rtol=rtol, atol=atol)


def outcome(program, lib):
    """``program(lib)``'s result, or ("error", its exception's class name, its message): an error
    case and a corner case compared alike (warnings silenced; they are compared elsewhere)."""
    with warnings.catch_warnings(), torch_on_one_thread():
        warnings.simplefilter("ignore")
        try:
            return program(lib)
        except Exception as exc:  # noqa: BLE001 -- the class and message are what is compared
            return "error", type(exc).__name__, str(exc)


def assert_same_result_or_error(program, tol=None):
    """``program(lib)`` raises torch's exception class with torch's message, or gives torch's
    result (tensors, tuples, scalars; ``tol`` as ``assert_same_result`` takes it)."""
    ours, theirs = outcome(program, internals), outcome(program, torch)
    if isinstance(theirs, tuple) and theirs[:1] == ("error",):
        assert ours == theirs
    else:
        assert_same_result(ours, theirs, tol)


def assert_second_derivatives_match_torch(program, *, rtol=0, atol=0):
    """``program(lib)`` returns ``(out, x)``: the gradient of ``out.sum()`` with respect to ``x``
    (made with ``create_graph``), that gradient's node, and the gradient of ``(g * g).sum()``
    through it, all as torch's."""
    def run(lib):
        out, x = program(lib)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return g, gg, g.grad_fn.name()
    with torch_on_one_thread():
        ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=rtol, atol=atol)
    assert_same(ours[1], theirs[1], rtol=rtol, atol=atol)
    assert ours[2] == theirs[2]


def same_outcome(run, *, rtol=None, atol=None, message=True):
    """``run(lib)`` builds its inputs with ``lib`` (torch or internals) and applies an op.

    Either both return equal results (values, shape, strides, offset, dtype), or both raise the
    same exception class and, where ``message`` is true, the same message.
    """
    try:
        with torch_on_one_thread():
            theirs = run(torch)
    except Exception as theirs_error:
        try:
            run(internals)
        except Exception as ours_error:
            assert type(ours_error) is type(theirs_error), (
                f"torch raised {type(theirs_error).__name__}: {theirs_error}\n"
                f"internals raised {type(ours_error).__name__}: {ours_error}")
            if message:
                assert str(ours_error) == str(theirs_error)
            return None
        raise AssertionError(f"torch raised {type(theirs_error).__name__}: {theirs_error}; internals did not") \
            from theirs_error
    ours = run(internals)
    assert_same_result(ours, theirs, {theirs.dtype: (rtol, atol)} if isinstance(theirs, torch.Tensor) else None)
    return ours, theirs


INF, NAN = math.inf, math.nan


def run(lib, program, **env):
    """A program's result (tensors described exactly) and its warnings, or its error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(program, {"lib": lib, "INF": INF, "NAN": NAN, **env})
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            return "error", type(exc).__name__, str(exc)
    # a message naming a type names the library's (``torch.Size``, ``internals.Size``)
    messages = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0].replace("internals.", "torch."))
                for w in caught]
    return describe_sample(result), messages


def describe_sample(r):
    if isinstance(r, (tuple, list)):
        return type(r).__name__, [describe_sample(t) for t in r]
    values = [repr(v) for v in r.detach().reshape(-1).tolist()]       # exact, NaN and -0.0 included
    return str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), values, type(r.grad_fn).__name__


def compare_gradients_and_nodes(build, first_target=0.0, atol=1e-14, allow_unused=False):
    """``build(lib, x, t)`` in both libraries: the node names, the input's and the target's
    gradients, and a second-order gradient (``first_target`` is t[0, 0])."""
    results = []
    for lib in (torch, internals):
        with torch_on_one_thread():
            x = lib.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=lib.float64, requires_grad=True)
            t = lib.tensor([[first_target, 1.0, 1.0], [0.2, 1.0, 0.5]], dtype=lib.float64, requires_grad=True)
            y = build(lib, x, t)
            (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            gxx = (lib.autograd.grad(gx.sum(), x, retain_graph=True, allow_unused=allow_unused)[0]
                   if gx.requires_grad else None)
            y.sum().backward()
        results.append((type(y.grad_fn).__name__, x.grad, t.grad, gxx))
    (node_t, *grads_t), (node_i, *grads_i) = results
    assert node_i == node_t
    for ours, theirs in zip(grads_i, grads_t):
        if theirs is None:
            assert ours is None
        else:
            assert_same(ours, theirs, rtol=1e-12, atol=atol)


def run_everyday_call(lib, program):
    """A program's result (tensors described exactly, anything else by its repr), its warnings,
    or its error; a type or message naming internals is read as naming torch."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(program, {"lib": lib})
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            return "error", type(exc).__name__, str(exc).replace("internals.", "torch.")
    # torch's C++ warnings end with where they were raised ("(Triggered internally at ...)")
    messages = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]
    tensors = result if isinstance(result, tuple) and not isinstance(result, lib.Size) else (result,)
    if all(isinstance(t, lib.Tensor) for t in tensors):
        return describe_sample(result), messages
    return repr(result).replace("internals", "torch"), messages


STEPS = 20


TOL = dict(rtol=0, atol=0)      # the same operators, rounded the same way: the same bits


class RoundedSqrt(TorchDispatchMode):
    """torch's CPU ``sqrt`` is MKL's ``vsSqrt`` (``ATen/cpu/vml.h``), which on this machine is
    not correctly rounded: about one float32 result in six (one float64 in 500) is an ulp off.
    internals' sqrt is correctly rounded (as NumPy's). So that every other operator of the
    optimizers can be compared bit for bit, torch's steps take NumPy's sqrt (its multi-tensor
    steps' ``_foreach_sqrt`` too)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten.sqrt.default, torch.ops.aten.sqrt_.default):
            rounded = torch.from_numpy(np.sqrt(args[0].numpy()))
            return args[0].copy_(rounded) if func is torch.ops.aten.sqrt_.default else rounded
        if func in (torch.ops.aten._foreach_sqrt.default, torch.ops.aten._foreach_sqrt_.default):
            # the multi-tensor steps' sqrt: the same, for each tensor of the list
            rounded = [torch.from_numpy(np.sqrt(t.numpy())) for t in args[0]]
            if func is torch.ops.aten._foreach_sqrt_.default:
                return [t.copy_(r) for t, r in zip(args[0], rounded)] and None
            return rounded
        return func(*args, **(kwargs or {}))


SHAPES = [(3, 4), (4,)]


def twin_params(seed=0, device="cpu", dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    theirs = [torch.nn.Parameter(torch.randn(*s, generator=g, dtype=dtype)) for s in SHAPES]
    ours = [internals.nn.Parameter(internals.from_torch(p.detach()).to(device)) for p in theirs]
    return ours, theirs


def set_grads(ours, theirs, g):
    for o, t in zip(ours, theirs):
        t.grad = torch.randn(t.shape, generator=g, dtype=t.dtype)
        o.grad = internals.from_torch(t.grad).to(o.device)


def run_trajectory(make_ours, make_theirs, device="cpu", steps=STEPS, dtype=torch.float32, tol=TOL):
    """``steps`` steps of the two optimizers on twin parameters of ``dtype`` (a (3, 4) matrix and
    a vector) given the same random gradients; the parameters compared (within ``tol``) after each."""
    ours, theirs = twin_params(device=device, dtype=dtype)
    opt_ours, opt_theirs = make_ours(ours), make_theirs(theirs)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        set_grads(ours, theirs, g)
        opt_ours.step()
        with RoundedSqrt():
            opt_theirs.step()
        for o, t in zip(ours, theirs):
            assert_same(o, t, **tol)
    return opt_ours, opt_theirs


def config_id(config):
    """A test id for an optimizer's keyword arguments: ``lr=0.1,rho=0.9``, or ``default``."""
    return ",".join(f"{k}={v}" for k, v in config.items()) or "default"


def assert_same_state(ours, theirs, keys, tol=TOL):
    """The two optimizers' per-parameter states: the same keys in ``keys``' order, equal tensors
    (within ``tol``)."""
    for o, t in zip(ours.state.values(), theirs.state.values(), strict=True):
        assert list(o) == list(t) == keys
        for key in t:
            assert_same(o[key], t[key], **tol)


def _state_dict_to(state_dict, convert):
    """An optimizer's state dict with every state tensor converted (``to_torch`` or ``from_torch``)."""
    return {"state": {i: {k: convert(v) for k, v in s.items()} for i, s in state_dict["state"].items()},
            "param_groups": state_dict["param_groups"]}


def run_trajectory_through_torch(make_ours, make_theirs, legs=3, steps=5, tol=TOL):
    """A trajectory whose optimizer changes hands every ``steps`` steps: internals' first, its
    parameters and state dict loaded into a fresh torch optimizer, then back into a fresh one of
    internals', and so on. Every parameter and state tensor must equal those of torch's
    uninterrupted run. Each fresh optimizer is made with ``lr=12.5``, so that the loaded
    param_groups, not the constructor, decide the step."""
    ours, theirs = twin_params()
    reference = [t.detach().clone().requires_grad_() for t in theirs]
    opt_ref = make_theirs(reference)
    g = torch.Generator().manual_seed(5)
    opt = make_ours(ours)
    for leg in range(legs):
        lib, params = (internals, ours) if leg % 2 == 0 else (torch, theirs)
        if leg:
            other = theirs if lib is internals else ours
            convert = internals.from_torch if lib is internals else (lambda t: t.to_torch())
            with lib.no_grad():
                for p, q in zip(params, other):
                    p.copy_(convert(q.detach()))
            saved = _state_dict_to(opt.state_dict(), convert)
            opt = make_ours(params, lr=12.5) if lib is internals else make_theirs(params, lr=12.5)
            opt.load_state_dict(saved)
        for _ in range(steps):
            for p, r in zip(params, reference):
                r.grad = torch.randn(r.shape, generator=g)
                p.grad = internals.from_torch(r.grad) if lib is internals else r.grad.clone()
            with RoundedSqrt():
                opt_ref.step()
                if lib is torch:
                    opt.step()
            if lib is internals:
                opt.step()
    for p, r in zip(params, reference):
        assert_same(p if lib is internals else internals.from_torch(p.detach()), r, **tol)
    final = opt.state_dict() if lib is internals else _state_dict_to(opt.state_dict(), internals.from_torch)
    expected = opt_ref.state_dict()
    assert final["param_groups"] == expected["param_groups"]
    for i, state in expected["state"].items():
        assert list(final["state"][i]) == list(state)
        for key, value in state.items():
            assert_same(final["state"][i][key], value, **tol)


def inputs(lib):
    x = lib.arange(6.0).reshape(2, 3)
    return {"x": x, "xt": x.t(), "l": lib.arange(6).reshape(2, 3), "m": lib.arange(12.0).reshape(3, 4) / 7,
            "b": lib.arange(24.0).reshape(2, 3, 4) / 5, "i": lib.tensor([2, 0]), "g": lib.ones(2, 3) * 2}


def no_grad(lib, fn):
    with lib.no_grad():
        return fn()


def meta(t):
    return str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(), t.requires_grad


def run_out_variant(lib, program):
    outs = []

    def e(*shape, dtype=None):
        t = lib.empty(*shape, dtype=dtype)
        outs.append((t, t._version))
        return t
    env = {"lib": lib, "no_grad": no_grad, "e": e, **inputs(lib)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(program, env)
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            return ("error", type(exc).__name__, str(exc).split(" (Triggered internally")[0])
    messages = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]
    if isinstance(result, tuple):
        identity = [r is o for r, (o, _) in zip(result, outs)]
        kind = (type(result).__module__.split(".")[-1], type(result).__name__, len(result))
        metas, values = [meta(r) for r in result], [r.tolist() for r in result]
    else:
        identity = [result is outs[0][0]] if outs else []
        kind, metas, values = None, meta(result), result.tolist()
    versions = [t._version - v for t, v in outs]
    return kind, identity, metas, versions, messages, values


ADDRESS = re.compile(r"0x[0-9a-f]+")


NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")


def stdout_of(lib, source):
    """What the snippet prints under ``lib``; the global settings it may change are put back."""
    if lib is internals:
        source = re.sub(r"\btorch\b", "internals", source)
    lib.manual_seed(0)
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(source, "<snippet>", "exec"), {"__name__": "__main__"})
            except Exception as exc:     # noqa: BLE001 -- what it raised is part of what it shows
                print(f"!! {type(exc).__name__}: {exc}")
    finally:
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)
        lib.set_grad_enabled(True)
    return ADDRESS.sub("0xADDR", buffer.getvalue().replace("internals", "torch"))


def last_digit(number):
    """One unit in the last printed digit of a float as printed ("1.0000": 1e-4, "4.8e-07": 1e-8);
    none for an integer (a class index, a size), which must be equal."""
    if not {".", "e"} & set(number.lower()):
        return 0.0
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def assert_prints_alike(source, compare_numbers=True):
    """The snippet prints torch's text, its numbers masked and its spaces collapsed (a printed
    tensor's widths follow its numbers), and each number within one unit of the last digit
    printed (or the numbers not compared at all where torch defines none)."""
    expected, got = stdout_of(torch, source), stdout_of(internals, source)
    assert expected.strip(), "the snippet prints something"
    assert " ".join(NUMBER.sub("#", got).split()) == " ".join(NUMBER.sub("#", expected).split())
    if compare_numbers:
        for ours, theirs in zip(NUMBER.findall(got), NUMBER.findall(expected)):
            assert abs(float(ours) - float(theirs)) <= max(last_digit(ours), last_digit(theirs)), (ours, theirs)


def read_snippets(filename):
    """The snippets of a round's file beside this one, by the id on each ``# --- <id>: <topic>`` line."""
    return dict(re.findall(r"^# --- (\S+): .*\n((?:(?!# --- ).*\n)*)",
                           (Path(__file__).parent / "course" / filename).read_text(), flags=re.M))


def snippet_params(snippets, known_differences):
    """The snippets' names, a known difference as a strict xfail (so that a fix is noticed)."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=known_differences[n]))
            if n in known_differences else n for n in snippets]


def assert_prints_what_torch_prints(source):
    expected = stdout_of(torch, source)
    assert expected.strip(), "the snippet prints something"
    assert stdout_of(internals, source) == expected


class EveryKernel:
    """Each sample runs one kernel of every CPU family that has a parallel loop: convolution
    (im2col, col2im and the matrix product), pooling and its backward, the scans, sort and
    selection, searchsorted, cross, cdist and its backward, batched inverse, an indexed copy,
    sums, an elementwise op and the sparse loops. Sizes past one grain (32,768 elements) where a
    loop would run on the calling thread anyway. The inputs are small integers: most results are
    exact in float32, whatever the order of the sums."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 2

    def __getitem__(self, i):
        lib, rng = self.lib, np.random.default_rng(i)
        F = lib.nn.functional

        def ints(*shape, high=4):
            return lib.from_numpy(rng.integers(-high, high + 1, shape).astype(np.float32))
        x = ints(2, 3, 8, 8).requires_grad_()
        conv = F.conv2d(x, ints(4, 3, 3, 3), padding=1)
        pools = F.max_pool2d(conv, 2), F.avg_pool2d(conv, 3, 1, 1), F.adaptive_avg_pool2d(conv, 3)
        grad, = lib.autograd.grad(pools[0].sum(), x)     # whole numbers: exact in any order
        pool_grad, = lib.autograd.grad(pools[1].sum() + pools[2].sum(), conv)
        rows = conv.detach().reshape(8, 64)
        a, b = ints(6, 4).requires_grad_(), ints(5, 4)
        distance = lib.cdist(a, b)
        distance_grad, = lib.autograd.grad(distance.sum(), a)
        square = ints(3, 4, 4, high=1) + 5 * lib.eye(4)
        big = ints(200, 200)
        picks = lib.from_numpy(rng.permutation(40000))
        sparse = lib.sparse_coo_tensor(lib.from_numpy(rng.integers(0, 5, (2, 12))), ints(12), (5, 5))
        return (conv.detach(), grad, pool_grad, *(p.detach() for p in pools), rows.cumsum(1), rows.logcumsumexp(1),
                *rows.cummax(1), *rows.sort(dim=1, stable=True), rows.kthvalue(5, 1).values,
                lib.searchsorted(rows.sort(1).values, rows), lib.linalg.cross(ints(5, 3), ints(5, 3)),
                distance.detach(), distance_grad, lib.linalg.inv(square), big.reshape(-1)[picks],
                big.sum(), big.sum(1), big.amax(0), big * 3 + 1, big @ big,
                sparse.coalesce().to_dense(), rows.to_sparse().to_dense(), sparse.mm(ints(5, 3)))


# ---------------------------------------------------------------- torch.fx graphs side by side
def _fx_name(target):
    """A node's target as a name both libraries share: a path or method name as is, a function
    by its own name (``relu`` for ``torch.relu`` and ``internals.relu``)."""
    return target if isinstance(target, str) else target.__name__


def _fx_arg(a):
    if isinstance(a, (tuple, list)):
        return type(a)(_fx_arg(v) for v in a)
    if isinstance(a, dict):
        return {k: _fx_arg(v) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(_fx_arg(a.start), _fx_arg(a.stop), _fx_arg(a.step))
    return f"%{a.name}" if hasattr(a, "op") and hasattr(a, "users") else a


def fx_nodes(gm):
    return [(n.op, n.name, _fx_name(n.target), _fx_arg(n.args), _fx_arg(n.kwargs), sorted(u.name for u in n.users))
            for n in gm.graph.nodes]


def fx_text(text, L):
    """A printed graph or code; torch's with its library's names read as ours (torch's functional
    ``gelu`` is its C binding ``torch._C._nn.gelu``, ours a Python function of ``nn.functional``)."""
    text = text.strip()
    if L is torch:
        text = text.replace("torch._C._nn.", "torch.nn.functional.").replace("torch.", "internals.")
    return text


def fx_unwrapped(text):
    """torch's code first declares the functions it calls by a global name (``math_sqrt``):
    our code calls them by the same names, and does not declare them (blank lines read as one)."""
    text = re.sub(r"^internals\.fx\._symbolic_trace\.wrap\(.*\)\n", "", text, flags=re.MULTILINE)
    return re.sub(r"\n\n+", "\n\n", text)


def fx_code(gm, L):
    return fx_unwrapped(fx_text(gm.code, L)).strip()


# ------------------------------------------------------------------ traced graphs
def graph_source(value):
    """An argument as the test compares it: a node by name, a dtype or layout by its torch name."""
    if hasattr(value, "op"):
        return value.name
    if isinstance(value, (list, tuple)):
        return [graph_source(v) for v in value]
    return repr(value).replace("internals.", "torch.")


def program_of(code, **names):
    """A hostile case written as source text, as a function of the library: its lines (or
    ``; ``-separated statements) run with ``L`` bound to the library and ``names`` in scope, and
    the last one's value is returned."""
    body, _, last = code.rpartition("\n" if "\n" in code else "; ")

    def run(L):
        env = {"L": L, **names}
        exec(body, env)
        return eval(last, env)
    return run


def seeded_input(*shape, seed=0, high=None):
    """An input of ``shape`` for either library, as a function of the library: float32 normal
    values, or int64 indices in ``[0, high)`` when ``high`` is given (the traced-program tables)."""
    def make(T):
        rng = np.random.default_rng(seed)
        a = rng.integers(0, high, shape) if high else rng.standard_normal(shape).astype(np.float32)
        return T.tensor(a)
    return make


def graph_calls(gm):
    """(name, target, args, kwargs) of every call, in graph order, and what the graph returns."""
    calls = []
    for n in gm.graph.nodes:
        if n.op == "call_function":
            target = "getitem" if n.target is operator.getitem else str(n.target).split("ops.", 1)[-1]
            if isinstance(n.target, types.FunctionType):    # ``torch.sym_float``: its name, not its address
                target = f"<function {n.target.__name__}>"
            kwargs = {k: graph_source(v) for k, v in n.kwargs.items()}
            calls.append((n.name, target, graph_source(list(n.args)), kwargs))
    output = next(n for n in gm.graph.nodes if n.op == "output")
    return calls, graph_source(output.args[0])


def placeholder_sizes(gm):
    """Each input's sizes as text (``['s75', '4']``: a symbol, or a number a guard pinned), or its
    symbol, for an int argument."""
    def text(val):
        return [str(n) for n in val.shape] if hasattr(val, "shape") else str(val)
    return [text(n.meta.get("val")) for n in gm.graph.nodes if n.op == "placeholder"]


def _as_lists(value, lib):
    """A program's result (tensors in lists, tuples and dicts) as plain Python lists and numbers."""
    if isinstance(value, (list, tuple)):
        return [_as_lists(v, lib) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v, lib) for k, v in value.items()}
    if lib is internals and isinstance(value, internals.Tensor):
        return value.detach().to_torch().tolist()
    return value.detach().tolist() if isinstance(value, torch.Tensor) else value


def _one_run(lib, compile_fn, build, calls, grad):
    """Each call's (result, gradients, state the program wrote, what it printed), and the graphs
    compiled after it, for ``build(lib) -> (fn, state reader or None)`` compiled by ``compile_fn``."""
    fn, state = build(lib)
    compiled, graphs = compile_fn(fn)
    records, counts = [], []
    for make in calls:
        args, printed = make(lib), io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                out = compiled(*args)
                grads = None
                if grad:
                    (out[0] if isinstance(out, (list, tuple)) else out).sum().backward()
                    grads = [_as_lists(a.grad, lib) for a in args if getattr(a, "requires_grad", False)]
            records.append((_as_lists(out, lib), grads, _as_lists(state(), lib) if state else None,
                            printed.getvalue().replace("internals.", "torch.")))
        except Exception as e:  # noqa: BLE001 -- the program's own error, compared by class
            records.append((type(e),))
        counts.append(graphs())
    return records, counts


def compiled_side_by_side(build, calls, grad=False):
    """Run a program eagerly (torch), under torch.compile on a counting backend and under
    internals.compile, one call per entry of ``calls`` (each a function of the library giving
    the arguments). Returns the three runs' records (``_one_run``), torch's graphs after each
    call and ours."""
    from torch._dynamo.testing import CompileCounter

    def with_torch(fn):
        torch._dynamo.reset()
        counter = CompileCounter()
        return torch.compile(fn, backend=counter), lambda: counter.frame_count

    def with_ours(fn):
        compiled = internals.compile(fn)
        return compiled, lambda: len(compiled.graphs)
    eager, _ = _one_run(torch, lambda fn: (fn, lambda: 0), build, calls, grad)
    theirs, torch_counts = _one_run(torch, with_torch, build, calls, grad)
    ours, our_counts = _one_run(internals, with_ours, build, calls, grad)
    return eager, theirs, ours, torch_counts, our_counts


def assert_records_equal(got, want):
    """Two runs' records (``_one_run``) equal: values to float32 rounding, errors by class."""
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert len(g) == len(w), (g, w)
        if len(w) == 1:
            assert g == w
            continue
        for part_g, part_w in zip(g[:3], w[:3], strict=True):
            _assert_close_lists(part_g, part_w)
        assert g[3] == w[3]


def _assert_close_lists(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (got, want)
        for a, b in zip(got, want, strict=True):
            _assert_close_lists(a, b)
    elif isinstance(want, float):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        assert got == want


# ---------------------------------------------------------------------------------------------
# Elementwise results compared part by part: infinities, NaNs and signed zeros as torch's
# ---------------------------------------------------------------------------------------------
def ours_and_torchs(values, dtype, device="cpu", shape=None):
    """``values`` as a torch tensor of ``dtype`` (reshaped to ``shape``) and its copy in internals on ``device``."""
    theirs = torch.tensor(values, dtype=dtype)
    if shape is not None:
        theirs = theirs.reshape(shape)
    return internals.from_torch(theirs).to(device), theirs


def _part_matches(ours, theirs):
    """One real part: a non-finite or zero part of torch's exactly (signs of zeros included)."""
    if not math.isfinite(theirs) or not math.isfinite(ours):
        return repr(ours) == repr(theirs)
    return ours != 0 or theirs != 0 or math.copysign(1, ours) == math.copysign(1, theirs)


def same(ours, theirs, real_ulps=None):
    """Layout and dtype; every infinity and NaN as torch's, and a zero part where torch's is
    zero too with torch's sign; complex values within ``COMPLEX_ULPS`` (torch's kernels fuse
    multiply-adds where the CPU has them). Real values are exact unless ``real_ulps`` is given
    (a library math function's last bits follow the CPU)."""
    if not theirs.dtype.is_complex:
        exact = dict(rtol=0, atol=0) if real_ulps is None else dict(ulps=real_ulps)
        return assert_same(ours, theirs, **exact)
    assert_same(ours, theirs, ulps=COMPLEX_ULPS)
    for index, (a, b) in enumerate(zip(ours.cpu().reshape(-1).tolist(), theirs.reshape(-1).tolist())):
        assert _part_matches(a.real, b.real) and _part_matches(a.imag, b.imag), (index, a, b)


def error_text(ours, theirs):
    ours_error, theirs_error = assert_same_error(ours, theirs)
    assert str(ours_error) == str(theirs_error)


# ---------------------------------------------------------------------------------------------
# Everyday programs described with their layout: values, shape, strides, offset, dtype, node, view or not
# ---------------------------------------------------------------------------------------------
def describe_result(lib, result):
    if isinstance(result, (tuple, list)):
        return [describe_result(lib, r) for r in result]
    if isinstance(result, lib.Tensor):
        return (result.tolist(), tuple(result.shape), result.stride(), result.storage_offset(),
                str(result.dtype).split(".")[-1], type(result.grad_fn).__name__ if result.grad_fn else None,
                result._base is not None)
    return repr(result)


def run_described(lib, program):
    """The result described (values, shape, strides, offset, dtype, node, view or not), or the
    error; and the warnings, without the C++ location torch appends."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = describe_result(lib, eval(program, {"lib": lib}))
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            result = (type(exc).__name__, str(exc).replace("internals", "torch"))
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def check_gradients_twice(tensors, program):
    """``program(lib, *leaves)`` in both libraries on float64 leaves made from torch's ``tensors``:
    its grad_fn name, the first gradients of a seeded weighted sum (taken with ``create_graph``) and
    their nodes, and the gradients of those gradients, as torch's."""
    def leaf(lib, t):
        return (lib.from_torch(t) if lib is internals else t.clone()).requires_grad_()

    def weights(lib, like):
        w = torch.randn(*like.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
        return lib.from_torch(w) if lib is internals else w

    results = []
    for lib in (torch, internals):
        leaves = [leaf(lib, t) for t in tensors]
        y = program(lib, *leaves)
        firsts = lib.autograd.grad((y * weights(lib, y)).sum(), leaves, create_graph=True)
        seconds = lib.autograd.grad(sum((g * g).sum() for g in firsts), leaves)
        results.append(([type(t.grad_fn).__name__ for t in (y, *firsts)], y, firsts, seconds))
    (node_t, y_t, firsts_t, seconds_t), (node_i, y_i, firsts_i, seconds_i) = results
    assert node_i == node_t
    assert_same(y_i, y_t, rtol=1e-12, atol=1e-12)
    for ours, theirs in zip((*firsts_i, *seconds_i), (*firsts_t, *seconds_t), strict=True):
        assert_same(ours, theirs, rtol=1e-10, atol=1e-10, exact_layout=False)
