"""Automatic dynamic shapes, as torch.compile does them (``torch/_dynamo/pgo.py``, ``config.py``'s
``automatic_dynamic_shapes``): the first compile is static; a recompile caused by a size that
changed traces that dim as a symbol, whose graph (guarded ``2 <= x.size()[0]``) serves every later
size but 0 and 1. Each case runs the same calls through torch.compile (the eager backend: its
Dynamo, guards and recompiles, without Inductor) and counts the compiles of both, compares the
recompile reasons with torch's ``guard_failures`` (what ``TORCH_LOGS=recompiles`` prints) and
the values with eager torch. Then the rest of what a recompile is decided by, beside torch: an
int argument made a symbol, a strict ``mark_dynamic``, and the words of the other guards
(an argument's value, a device, a storage offset that is not guarded)."""
import math

import numpy as np
import pytest
import torch
from torch._dynamo.testing import CompileCounter, CompileCounterWithBackend
from torch._dynamo.utils import guard_failures

import internals
from internals._dynamo import config


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _arguments(T, call, prepare):
    """A call's arguments for library ``T``: a numpy array becomes a tensor, other values stay;
    a call is a list of positional arguments, or a pair (that list, a dict of keywords)."""
    args, kwargs = call if isinstance(call, tuple) else (call, {})
    args = [T.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    if prepare is not None:
        args = prepare(T, args)
    return args, kwargs


def _run_both(make_fn, calls, dynamic=None, prepare=None, graphs=None):
    """Run ``calls`` (``_arguments``) through torch.compile and internals.compile, ``prepare(T,
    args)`` making the arguments of each call (marks, views); return (torch's compile count,
    torch's reasons, the CompiledFunction); torch's graphs are put in ``graphs``."""
    torch._dynamo.reset()
    compiles = [] if graphs is None else graphs

    def backend(gm, example_inputs):
        compiles.append(gm)
        return gm.forward
    theirs_fn = make_fn(torch)
    theirs = torch.compile(theirs_fn, backend=backend, dynamic=dynamic)
    ours = internals.compile(make_fn(internals), dynamic=dynamic)
    for call in calls:
        args, kwargs = _arguments(torch, call, prepare)
        want = theirs(*args, **kwargs)
        args, kwargs = _arguments(internals, call, prepare)
        got = ours(*args, **kwargs)
        assert tuple(got.shape) == tuple(want.shape) and tuple(got.stride()) == tuple(want.stride())
        np.testing.assert_allclose(got.detach().to_torch().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
    code = getattr(theirs_fn, "__code__", None) or type(theirs_fn).forward.__code__     # a module: its forward's
    reasons = [r.split("  #")[0].rstrip() for r in guard_failures[code]]
    return len(compiles), reasons, ours


def _ours(reasons):
    return [r for failures in reasons for r in failures]


def _double(T):
    def double(x):
        return x * 2 + 1
    return double


SIZES = [[_rand(n)] for n in (3, 4, 5, 1, 0, 7)]


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_sizes_3_4_5_1_0_compile_as_often_as_torch(dynamic):
    count, reasons, ours = _run_both(_double, SIZES, dynamic)
    assert ours.recompiles == count == {None: 4, True: 3, False: 6}[dynamic]
    assert _ours(ours.recompile_reasons) == reasons


def test_the_recompile_traces_the_changed_dim_as_a_symbol():
    _, _, ours = _run_both(_double, SIZES[:3])
    gm = ours.graphs[-1]
    x = next(n for n in gm.graph.nodes if n.op == "placeholder").meta["val"]
    assert str(x.shape[0]) == "s77"        # torch's name: the hash of the source L['x'].size()[0]
    assert ours.recompile_reasons == [["0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"]]
    # one kernel serves every size: it takes the size as an argument
    assert "def fused_0(out0, in0, s77):" in ours.kernels[0].text and "prange(s77)" in ours.kernels[0].text


def _softmax_of_sum(T):
    def softmax_of_sum(x, y):
        return (x * 2 + y).softmax(-1)
    return softmax_of_sum


def test_two_dims_two_arguments_and_duck_shaping():
    shapes = [(3, 2), (4, 2), (4, 3), (5, 5), (6, 7), (1, 7)]
    calls = [[_rand(s, 1), _rand(s, 2)] for s in shapes]
    count, reasons, ours = _run_both(_softmax_of_sum, calls)
    assert ours.recompiles == count
    assert _ours(ours.recompile_reasons) == reasons


def _broadcast(T):
    def broadcast(x, y):
        return (x + y).relu().sum(0)
    return broadcast


def test_shapes_that_must_agree_keep_agreeing():
    # the second argument's size changes with the first: one symbol for both (duck shaping)
    calls = [[_rand((n, 3), 1), _rand((n, 3), 2)] for n in (2, 3, 8, 5)]
    count, reasons, ours = _run_both(_broadcast, calls)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons
    # a call whose sizes break the graph's guards recompiles; eager decides that it fails
    with pytest.raises(RuntimeError):
        ours(internals.ones(4, 3), internals.ones(5, 3))


def _grouped_conv(T):
    def grouped_conv(x, w):
        return T.nn.functional.conv1d(x, w, groups=2)
    return grouped_conv


def test_a_size_a_guard_replaced_by_an_expression_is_checked_as_one():
    """The channel check's guard ``Eq(s_x, 2*s_w)`` replaces the input's channels by twice the
    weight's (torch's ShapeEnv replacement): one dynamic graph serves every channel count, and
    a call whose channels are not twice the weight's fails that size's guard, then eager's check."""
    calls = [[_rand((1, 2 * c, 6), 1), _rand((2 * c, c, 3), 2)] for c in (2, 3, 4)]
    count, reasons, ours = _run_both(_grouped_conv, calls, dynamic=True)
    assert ours.recompiles == count == 1 and _ours(ours.recompile_reasons) == reasons == []
    x = next(n for n in ours.graphs[-1].graph.nodes if n.op == "placeholder").meta["val"]
    assert str(x.shape[1]).startswith("2*s")
    with pytest.raises(RuntimeError, match=r"expected input\[1, s\d+, s\d+\] to have 2\*s\d+ channels"):
        ours(internals.ones(1, 6, 6), internals.ones(4, 2, 3))      # recompiled: the trace raises


def test_mark_dynamic_traces_symbols_from_the_first_call():
    torch._dynamo.reset()
    ours = internals.compile(_double(internals))
    x = internals.ones(3)
    internals._dynamo.mark_dynamic(x, 0)
    ours(x)
    for n in (4, 9):
        np.testing.assert_array_equal(ours(internals.ones(n)).to_torch().numpy(), np.full(n, 3, np.float32))
    assert ours.recompiles == 1 and ours.recompile_reasons == []


def test_the_settings_are_torchs():
    assert config.automatic_dynamic_shapes == torch._dynamo.config.automatic_dynamic_shapes is True
    assert config.assume_static_by_default == torch._dynamo.config.assume_static_by_default is True


def _add(T):
    def add(x, y):
        return x + y
    return add


def test_a_strict_mark_the_trace_pins_is_torchs_error():
    """``mark_dynamic`` on a dim that the trace pins to its size (adding a tensor of static size
    3) is an error, torch's class and words; ``maybe_mark_dynamic`` there is none."""
    errors = {}
    for T in (torch, internals):
        torch._dynamo.reset()
        x = T.ones(3)
        T._dynamo.mark_dynamic(x, 0)
        compiled = T.compile(_add(T), backend="eager") if T is torch else T.compile(_add(T))
        with pytest.raises(RuntimeError) as info:
            compiled(x, T.ones(3))
        errors[T] = info.value
    assert type(errors[internals]).__name__ == type(errors[torch]).__name__ == "ConstraintViolationError"
    assert type(errors[internals]).__module__ == "internals.fx.experimental.symbolic_shapes"
    assert str(errors[internals]) == str(errors[torch]).split("\n\nUser stack")[0]

    def weak(T, args):
        T._dynamo.maybe_mark_dynamic(args[0], 0)
        return args
    count, reasons, ours = _run_both(_add, [[_rand(3), _rand(3, 1)], [_rand(4), _rand(4, 1)]], prepare=weak)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def test_a_strict_mark_raises_on_every_call_past_the_recompile_limit():
    """A compile that raised ``ConstraintViolationError`` made no cache entry, so it counts
    nothing toward ``recompile_limit``: the call after the limit raises too, as torch's does,
    never running eagerly with the caller's declaration wrong."""
    outcomes = {}
    for T in (torch, internals):
        torch._dynamo.reset()
        compiled = T.compile(_add(T), backend="eager") if T is torch else T.compile(_add(T))
        outcomes[T] = []
        for _ in range(config.recompile_limit + 2):
            x = T.ones(3)
            T._dynamo.mark_dynamic(x, 0)
            try:
                compiled(x, T.ones(3))
                outcomes[T].append("ran")
            except RuntimeError as e:
                outcomes[T].append(type(e).__name__)
    assert outcomes[internals] == outcomes[torch] == ["ConstraintViolationError"] * (config.recompile_limit + 2)


def test_a_mark_on_a_size_of_1_leaves_it_static_as_torch():
    """A size of 1 is never a symbol: the mark has nothing to hold, no error; the next size
    recompiles, and makes the dim dynamic."""
    def strict(T, args):
        T._dynamo.mark_dynamic(args[0], 0)
        return args
    count, reasons, ours = _run_both(_double, [[_rand(n)] for n in (1, 5, 6)], prepare=strict)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons
    assert [str(p.meta["val"].shape[0]) for gm in ours.graphs for p in gm.graph.nodes if p.op == "placeholder"] == \
        ["1", "s77"]


def _modes(T):
    def modes(x, mode, flag=False, scale=None):
        y = x * 2 if mode == "a" else x * 4
        y = y + 1 if flag else y - 1
        return y * 5 if scale is None else y * 3
    return modes


def test_an_argument_that_changed_is_named_in_torchs_words():
    """``mode == 'a'``, ``flag == False``, ``scale is None``: the guard each cached graph failed,
    as torch prints it; a keyword argument passed with its default value is the call that left
    it out (one graph); the graph used last is tried first (0/0 before 0/1 after a call of 'a')."""
    x = _rand(3)
    calls = [[x, "a"], [x, "b"], ([x, "b"], {"flag": True}), ([x, "b"], {"flag": True, "scale": 2}),
             ([x, "b"], {"flag": True, "scale": None}), [x, "a"], ([x, "c"], {"flag": True, "scale": 2.5})]
    count, reasons, ours = _run_both(_modes, calls)
    assert ours.recompiles == count == 5
    assert _ours(ours.recompile_reasons) == reasons
    # the last recompile: 0/0, used last, first; 0/2, whose scale guard failed before, fails it again
    assert reasons[-4:-2] == ["0/0: mode == 'a'", "0/2: scale is None"]


def _reshape(T):
    def reshape(x, shape):
        return x.reshape(shape) * 2
    return reshape


def _options(T):
    def options(x, settings):
        return x * settings["scale"] + settings["shift"]
    return options


def test_a_container_argument_that_changed_is_named_in_torchs_words():
    x = _rand(6)
    count, reasons, ours = _run_both(_reshape, [[x, (2, 3)], [x, (3, 2)], [x, (3, 2, 1)]])
    assert ours.recompiles == count == 3
    assert _ours(ours.recompile_reasons) == reasons == ["0/0: shape[0] == 2", "0/1: len(shape) == 2",
                                                          "0/0: len(shape) == 2"]
    count, reasons, ours = _run_both(_options, [[x, {"scale": 2, "shift": 1.5}], [x, {"scale": 2, "shift": 2.5}]])
    assert ours.recompiles == count == 2
    assert _ours(ours.recompile_reasons) == reasons == ["0/0: settings['shift'] == 1.5"]


def test_a_view_at_another_storage_offset_reuses_the_graph():
    """torch guards no storage offset: the graph's kernels read each input from its first
    element, so one graph serves every offset; a stride change recompiles, in torch's words."""
    base = np.arange(12, dtype=np.float32)

    def view(T, args):
        start, step = args
        return [T.tensor(base)[start:start + 3 * step:step]]
    count, reasons, ours = _run_both(_double, [[1, 1], [2, 1], [5, 1], [3, 2]], prepare=view)
    assert ours.recompiles == count == 2
    assert _ours(ours.recompile_reasons) == reasons
    assert reasons == ["0/0: tensor 'x' stride mismatch at index 0. expected 1, actual 2"]  # not the offset


def test_a_device_change_is_a_dispatch_key_set_mismatch():
    """A tensor on another device type fails TENSOR_MATCH's dispatch key set check, printed as
    torch prints it (torch's CPU build has no CUDA: its reason for a meta tensor, with Meta
    read as CUDA)."""
    torch._dynamo.reset()
    fn = _double(torch)
    theirs = torch.compile(fn, backend="eager")
    theirs(torch.ones(3))
    theirs(torch.ones(3, device="meta"))
    reasons = [r.split("  #")[0].rstrip() for r in guard_failures[fn.__code__]]
    ours = internals.compile(_double(internals))
    ours(internals.ones(3))
    np.testing.assert_array_equal(ours(internals.ones(3, device="cuda")).cpu().to_torch().numpy(),
                                  np.full(3, 3, np.float32))
    assert _ours(ours.recompile_reasons) == [r.replace("Meta", "CUDA") for r in reasons]
    assert "DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, AutogradCUDA)" in ours.recompile_reasons[0][0]


def _scale(T):
    def scale(x, n):
        return x * n
    return scale


def test_an_int_argument_that_changed_is_a_symbol():
    """The first compile bakes ``n`` in (guarded ``n == 2``); the recompile its change causes
    takes it as an argument, the symbol ``s86`` (from its source ``L['n']``), which every later
    value uses, 0 and 1 too; the kernel takes it as a parameter."""
    graphs = []
    calls = [[_rand(3), n] for n in (2, 3, 4, 1, 0)] + [[_rand(4), 5], [_rand(5), 6]]
    count, reasons, ours = _run_both(_scale, calls, graphs=graphs)
    assert ours.recompiles == count == 3 and _ours(ours.recompile_reasons) == reasons

    def inputs(gm, key):        # n's placeholder: torch's l_n_, the package's n_1
        return [str(p.meta[key]) for p in gm.graph.nodes if p.op == "placeholder" and "n_" in p.name]
    assert [inputs(gm, "val") for gm in ours.graphs] == [inputs(gm, "example_value") for gm in graphs]
    assert "def fused_0(out0, in0, s77, s86):" in ours.kernels[0].text
    # the symbol's value is found however the call passes it
    a = _rand(5, 3)
    np.testing.assert_array_equal(ours(internals.tensor(a), n=7).to_torch().numpy(),
                                  _scale(torch)(torch.from_numpy(a), n=7).numpy())
    assert ours.recompiles == 3


def test_an_int_argument_that_changed_to_1_is_a_symbol_at_1():
    """torch does not specialize an int argument at 0 or 1 when its change makes it a symbol
    (``create_unspecified_symint_and_symbol``): a change from 0 to 1 compiles the graph that
    serves every later value (torch: 1, 2, 2, 2 graphs; the package pinned the 1 and compiled
    once more for 2)."""
    calls = [[_rand(3), n] for n in (0, 1, 2, 3)]
    count, reasons, ours = _run_both(_scale, calls)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def _read_a(T):
    def read_a(x, d):
        return x * d["a"]
    return read_a


_WEIGHTS = {"a": 2, "b": 1}


def _read_global(T):
    def read_global(x):
        return x * _WEIGHTS["a"]
    return read_global


def _iterate(T):
    def iterate(x, d):
        return x * sum(d.values())
    return iterate


def test_only_the_dict_entries_read_are_guarded():
    """torch guards the entries a function reads from a dict (``d['a'] == 2``), an argument's or
    a global's (``G['_WEIGHTS']['a'] == 2``): another entry changed, added or moved is no
    recompile. A function that iterates the dict reads all of it."""
    x = _rand(3)
    dicts = [{"a": 2, "b": 1}, {"a": 2, "b": 5}, {"a": 2, "b": 5, "c": 1}, {"b": 5, "a": 2}, {"a": 3, "b": 5}]
    count, reasons, ours = _run_both(_read_a, [[x, d] for d in dicts])
    assert ours.recompiles == count == 2
    assert _ours(ours.recompile_reasons) == reasons == ["0/0: d['a'] == 2"]

    def set_weights(T, args):
        _WEIGHTS.clear()
        _WEIGHTS.update(args[1])
        return args[:1]
    count, reasons, ours = _run_both(_read_global, [[x, d] for d in dicts], prepare=set_weights)
    assert ours.recompiles == count == 2
    assert _ours(ours.recompile_reasons) == reasons == ["0/0: G['_WEIGHTS']['a'] == 2"]
    count, reasons, ours = _run_both(_iterate, [[x, d] for d in dicts[:3]])
    assert ours.recompiles == count == 3


def _affine(T):
    def affine(x, s):
        return x * s + 1
    return affine


def _sign(T):
    def sign(x, s):
        return x * s if s > 0 else x - s
    return sign


def test_a_float_argument_that_changed_is_an_input():
    """torch 2.13 does not specialize floats (``specialize_float=False``): the recompile a new
    value causes takes it as an input of the graph, which every later float uses, 0.0, 1.0 and
    inf too, but nan (``not math.isnan(s)``, a static graph of its own); an int in its place
    fails the type check; a decision on the float is a guard (``s > 0.0``)."""
    x = _rand(3)
    values = [1.5, 2.5, 3.5, 0.0, 1.0, -2.0, float("nan"), float("inf"), 2, 3]
    count, reasons, ours = _run_both(_affine, [[x, s] for s in values])
    assert ours.recompiles == count == 4 and _ours(ours.recompile_reasons) == reasons
    # the second graph takes the float as its last input, a symbol (torch's, a float64 tensor)
    assert [str(p.meta["val"]) for p in ours.graphs[1].graph.nodes if p.op == "placeholder"][1:] == ["zf0"]
    count, reasons, ours = _run_both(_sign, [[x, s] for s in (1.5, 2.5, -3.5, -1.0, 4.0)])
    assert ours.recompiles == count == 3
    assert _ours(ours.recompile_reasons) == reasons == ["0/0: s == 1.5", "0/1: s > 0.0", "0/0: s == 1.5"]


def _clamp(T):
    def clamp(x, s):
        return x.clamp(min=s)
    return clamp


def _alpha(T):
    def alpha(x, s):
        return T.add(x, x * 2, alpha=s)
    return alpha


def _lerp(T):
    def lerp(x, s):
        return T.lerp(x, x * 2, s)
    return lerp


def _where(T):
    def where(x, s):
        return T.where(x > 0, x, s)
    return where


@pytest.mark.parametrize("make", [_clamp, _alpha, _lerp, _where], ids=["clamp", "alpha", "lerp", "where"])
def test_a_float_an_operator_takes_as_a_scalar_stays_an_input(make):
    """A float given to an operator's Scalar argument (``clamp(min=s)``, ``alpha=s``) is not
    specialized: its value decides nothing about the output's metadata, so the second graph
    takes it as an input and serves every later value, as torch's (which passes it as a 0-dim
    float64 tensor and calls ``.item()`` inside): two compiles, not one per value."""
    x = _rand(5)
    count, reasons, ours = _run_both(make, [[x, s] for s in (0.25, -0.5, 0.75, 1.25)])
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def _plus_range(T):
    def plus_range(x):
        return x + T.arange(x.shape[0])
    return plus_range


def test_a_range_as_long_as_a_dynamic_dim_keeps_it_a_symbol():
    """``arange(x.shape[0])`` has ``s77`` elements: its size is an expression of the symbol, as
    torch's ``_refs.arange`` computes it, not a guard pinning the symbol to the example size
    (which made a recompile per size)."""
    count, reasons, ours = _run_both(_plus_range, [[_rand(n)] for n in (3, 4, 5, 6)])
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def _half(T):
    def half(x):
        return x[: x.shape[0] // 2] * 2
    return half


def _back_half(T):
    def back_half(x):
        return x[x.shape[0] // 2:] + 1
    return back_half


@pytest.mark.parametrize("make", [_half, _back_half])
def test_a_slice_bound_computed_from_a_size_stays_a_symbol(make):
    """``x[: x.shape[0] // 2]``: the bound is a SymInt that the slice takes as it is (torch's
    ``THPUtils_unpackSlice``), not read as an int, which pinned the size (a recompile per size).
    The guards left (the half is not 0 or 1) recompile where torch's do and read as torch's:
    a size's half that must not be 1 is a bound on the size (``4 <= x.size()[0]``), and a sum
    is written ``(x.size()[0] + (-1)*(x.size()[0] // 2)) != 1``."""
    count, reasons, ours = _run_both(make, [[_rand(n)] for n in (4, 6, 8, 3, 2, 5)])
    assert ours.recompiles == count == 3
    ours = _ours(ours.recompile_reasons)
    assert [r.split(":")[0] for r in ours] == ["0/0", "0/1", "0/0"]
    assert ours == reasons


def test_the_backward_of_cat_keeps_the_dim_a_symbol():
    """``cat``'s backward narrows the gradient at ``x.shape[0]``: the Python binding takes the
    symbol for narrow's ``SymInt start`` as it is (torch's ``toSymInt``), where reading it as an
    int pinned the symbol, a recompile per size; the gradients are torch's."""
    torch._dynamo.reset()
    graphs, compiled = [], {}
    for T in (torch, internals):
        def fn(x, T=T):
            return (T.cat([x, 2 * x]) * T.cat([x, x])).sum()
        compiled[T] = internals.compile(fn) if T is internals else \
            torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
    for n in (3, 4, 5, 6):
        grads = []
        for T in (torch, internals):
            x = T.tensor(_rand(n), requires_grad=True)
            compiled[T](x).backward()
            grads.append(x.grad.numpy() if T is torch else x.grad.to_torch().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    assert compiled[internals].recompiles == len(graphs) == 2 and not compiled[internals].break_reasons


def test_a_size_that_a_guard_pinned_is_checked_as_that_number():
    """A (3, 3) input that requires grad, its first dim dynamic: the output's gradient has the
    size 3 twice, so duck shaping pins the symbol to 3, and the entry's guards name the pinned
    symbol. A call of the same sizes reuses the graph (a KeyError before: the guard found no
    value for the symbol); the gradients are torch's."""
    torch._dynamo.reset()
    counter, compiled = CompileCounter(), {}
    for T in (torch, internals):
        def fn(x, T=T):
            return x.softmax(-1).log()
        compiled[T] = internals.compile(fn) if T is internals else torch.compile(fn, backend=counter)
    for i, n in enumerate((2, 2, 3, 3)):
        grads = []
        for T in (torch, internals):
            x = T.tensor(_rand((n, 3), seed=i), requires_grad=True)
            (compiled[T](x) * T.tensor(_rand((n, 3), seed=9))).sum().backward()
            grads.append(x.grad.numpy() if T is torch else x.grad.to_torch().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    assert len(compiled[internals].graphs) == counter.frame_count == 2


def test_numbers_are_symbols_on_the_aot_autograd_path_too():
    """Inputs that require grad: a float and an int argument whose values changed become primals
    of the joint graph, symbols, as torch's (its ``L['s']``, ``L['n']``), so the compile each first change
    causes serves every later value, forward and backward; the gradients are torch's."""
    torch._dynamo.reset()
    graphs, compiled, fns = [], {}, {}
    for T in (torch, internals):
        def fn(x, s, n):
            return (x * s).sum() + x[:1].sum() * n
        fns[T] = fn
        compiled[T] = internals.compile(fn) if T is internals else \
            torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
    x = _rand(4)
    for s, n in ((0.5, 2), (0.75, 2), (1.25, 2), (1.25, 3), (-2.0, 4), (3.0, 5)):
        grads = []
        for T in (torch, internals):
            t = T.tensor(x, requires_grad=True)
            compiled[T](t, s, n).backward()
            grads.append(t.grad.numpy() if T is torch else t.grad.to_torch().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    ours = compiled[internals]
    reasons = [r.split("  #")[0].rstrip() for r in guard_failures[fns[torch].__code__]]
    assert ours.recompiles == len(graphs) == 3 and _ours(ours.recompile_reasons) == reasons
    assert not ours.break_reasons


def _loop(T):
    def loop(x, n):
        return sum(x * i for i in range(n)) + x
    return loop


def test_a_symbol_a_guard_pins_is_still_an_input():
    """``range(n)`` pins the symbol the recompile made of ``n`` (``n == 3``, torch's guard too):
    the graph still takes ``n``, and each new value recompiles, as torch's."""
    x = _rand(3)
    count, reasons, ours = _run_both(_loop, [[x, n] for n in (2, 3, 4, 4)])
    assert ours.recompiles == count == 3
    assert _ours(ours.recompile_reasons) == reasons


class _Affine:
    """A plain object whose method is compiled: Dynamo guards its type and the attributes the
    method (and the methods it calls) read."""

    def __init__(self, w, b=0.0, note="unread"):
        self.w, self.b, self.note = w, b, note

    def forward(self, x):
        return x * self.w + self._shift()

    def _shift(self):
        return self.b


def test_a_method_guards_the_attributes_it_reads():
    """A method of a plain object is compiled, not run eagerly: an attribute it reads
    (``self.b`` through ``_shift``) that changed recompiles; one it does not read does not."""
    x = _rand(3)
    objects = {T: _Affine(2.0) for T in (torch, internals)}

    def call(T, args):
        objects[T].b, objects[T].note = args[1], args[2]
        return args[:1]
    count, _, ours = _run_both(lambda T: objects[T].forward, [[x, 0.0, "a"], [x, 0.0, "b"], [x, 1.0, "b"]],
                               prepare=call)
    assert ours.recompiles == count == 2 and not ours.break_reasons


def _maybe_add(T):
    def maybe_add(x, y=None):
        return x if y is None else x + y
    return maybe_add


def _size(T):
    def size(x):
        return x.shape[0] + 1
    return size


def test_a_function_whose_first_trace_has_no_operation_is_skipped():
    """Dynamo compiles no graph without an operation, and skips that code from then on: even
    the later call that adds runs eagerly, with no compile."""
    x = _rand(3)
    count, _, ours = _run_both(_maybe_add, [[x], [x, x], [x]])
    assert ours.recompiles == count == 0
    size = internals.compile(_size(internals))
    assert size(internals.tensor(x)) == _size(torch)(torch.tensor(x)) and size.recompiles == 0
    assert size.graphs == [] and size.break_reasons == []


def test_a_later_trace_without_an_operation_compiles_no_graph():
    """After a call that compiled a graph, one whose trace has no operation (``y`` None: the
    function returns ``x``) is guarded as Dynamo's frame is but compiles no graph: torch's one
    graph for the four calls (the package counted a second, empty one)."""
    x = _rand(3)
    count, _, ours = _run_both(_maybe_add, [[x, x], [x], [x, x], [x]])
    assert len(ours.graphs) == count == 1 and ours.break_reasons == []


def _calls_that_compute_nothing(T):
    """Programs whose aten trace holds no operation: a call that gives a tensor (``F.dropout``
    in eval, ``contiguous()`` of a contiguous tensor, ``to`` its own dtype) and reads Dynamo
    answers while it traces (a size, ``dim()``, an attribute)."""
    dropout = T.nn.Dropout(0.5).eval()
    return {
        "Dropout in eval": dropout,
        "F.dropout in eval": lambda x: T.nn.functional.dropout(x, 0.5, training=False),
        "contiguous": lambda x: x.contiguous(),
        "to its dtype": lambda x: x.to(x.dtype),
        "size": lambda x: x.size(),
        "dim": lambda x: x.dim(),
        "grad": lambda x: x.grad,
        "is_contiguous": lambda x: x.is_contiguous(),
    }


@pytest.mark.parametrize("name", list(_calls_that_compute_nothing(torch)))
def test_a_call_that_gives_a_tensor_is_an_operation_though_it_computes_nothing(name):
    """Dynamo's empty-graph rule counts its graph's calls (``count_calls``): a library call
    that gives a tensor is a node there even where it computes nothing, so Dynamo compiles a
    graph for ``Dropout`` in eval (1 graph); a size, ``dim()`` or an attribute read is a
    value Dynamo knows, no node, and that code is skipped (0 graphs). The values are eager's."""
    torch._dynamo.reset()
    counter = CompileCounter()
    theirs = torch.compile(_calls_that_compute_nothing(torch)[name], backend=counter)
    fn = _calls_that_compute_nothing(internals)[name]
    ours = internals.compile(fn)
    x = _rand(3)
    for _ in range(2):
        want, got = theirs(torch.tensor(x)), ours(internals.tensor(x))
        if isinstance(want, torch.Tensor):
            np.testing.assert_array_equal(got.to_torch().numpy(), want.numpy())
        else:
            assert got == want and type(got).__name__ == type(want).__name__
    assert len(ours.graphs) == counter.frame_count == (1 if name in ("Dropout in eval", "F.dropout in eval",
                                                                     "contiguous", "to its dtype") else 0)


def _first_of(T):
    def first_of(xs, d):
        return T.cat(xs) * d["w"].sum()
    return first_of


def _sum_over(T):
    def sum_over(x, dim):
        return x.sum(dim=dim)
    return sum_over


def test_tensors_in_containers_are_named_as_torch_names_them():
    """A tensor in a list or a dict argument is ``xs[0]`` or ``d['w']`` in a recompile reason;
    an int argument that changed to 1 (a value never made a symbol) still reaches the graph."""
    xs, w = [_rand(3), _rand(2)], _rand(1)
    calls = [[xs, {"w": w}], [[_rand(4), _rand(2)], {"w": w}], [xs, {"w": _rand(2)}]]
    def tensors(T, args):
        return [[T.tensor(a) for a in args[0]], {"w": T.tensor(args[1]["w"])}]
    count, reasons, ours = _run_both(_first_of, calls, prepare=tensors)
    assert ours.recompiles == count == 3 and _ours(ours.recompile_reasons) == reasons
    assert reasons[0] == "0/0: tensor 'xs[0]' size mismatch at index 0. expected 3, actual 4"
    count, reasons, ours = _run_both(_sum_over, [[_rand((3, 4)), 0], [_rand((3, 4)), 1]])
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons and not ours.break_reasons


def _mlp(T):
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))


def _normed(T):
    def normed(x, w):
        return (T.nn.functional.layer_norm(x, (4,)) @ w).softmax(-1)
    return normed


@pytest.mark.parametrize("make", [_mlp, _normed], ids=["module", "function"])
def test_a_graph_through_aot_autograd_becomes_dynamic_too(make):
    """Inputs that require grad (a module's parameters, or arguments): the recompile a new
    batch size causes traces the joint graph, and so the forward and backward graphs, with the
    size a symbol, as torch does: one recompile, then every size reuses it, every gradient
    torch's."""
    fns, graphs = {}, []
    torch._dynamo.reset()
    for T in (torch, internals):
        fn = make(T)
        fns[T] = (fn, internals.compile(fn) if T is internals else
                  torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward))
    w = _rand((4, 2), seed=1)
    for n in (3, 5, 6, 9):
        x = _rand((n, 4))
        grads = {}
        for T, (fn, compiled) in fns.items():
            args = [T.tensor(x, requires_grad=True)] + ([] if make is _mlp else [T.tensor(w, requires_grad=True)])
            out = compiled(*args)
            (out * T.arange(out.numel()).reshape(out.shape)).sum().backward()
            params = list(fn.parameters()) if make is _mlp else []
            grads[T] = [a.grad for a in args + params]
            for p in params:
                p.grad = None
        for got, want in zip(grads[internals], grads[torch], strict=True):
            np.testing.assert_allclose(got.to_torch().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    ours = fns[internals][1]
    assert ours.recompiles == len(graphs) == 2 and not ours.break_reasons
    # the joint graph's first input, x: its batch size a symbol (a function's: torch's s77)
    first = next(n for n in ours.aot.joint.graph.nodes if n.op == "placeholder")
    size = str(first.meta["val"].shape[0])
    assert size == "s77" if make is _normed else not size.isdigit()


def _log_softmax(T):
    def log_softmax(x):
        return x.softmax(-1).log()
    return log_softmax


def _requiring_grad(T, args):
    return [a.requires_grad_() for a in args]


def test_a_size_equal_to_a_static_one_stays_a_symbol_in_the_backward():
    """Rows of 2, 3, 4, 5 of 3 columns, requiring grad: at the recompile the rows (3) equal the
    static columns, but the gradient coming in is traced with a symbol only where its output's
    size is one, as torch makes it from the output's fake, so the rows are not pinned to 3 by
    the backward's broadcast and the recompiled graph serves every later size (torch's 2)."""
    calls = [[_rand((n, 3), seed=n)] for n in (2, 3, 4, 5)]
    count, reasons, ours = _run_both(_log_softmax, calls, prepare=_requiring_grad)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons
    tangent = [n for n in ours.aot.joint.graph.nodes if n.op == "placeholder"][-1]
    assert not str(tangent.meta["val"].shape[0]).isdigit() and tangent.meta["val"].shape[1] == 3


def _add_row(T):
    def add_row(x, b):
        return (x + b).mean(0)
    return add_row


def test_a_broadcast_of_fewer_dims_does_not_pin_a_size_to_its_value():
    """(n, 3) + (3,) with n = 2, 3, 4, 5: at the recompile the rows (3) equal the row's length,
    but the broadcast aligns the shapes on the right before comparing sizes, so the rows stay a
    symbol and the recompiled graph serves every later size (torch's 2)."""
    calls = [[_rand((n, 3), seed=n), _rand(3)] for n in (2, 3, 4, 5)]
    count, reasons, ours = _run_both(_add_row, calls)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def _zeros_plus_columns(T):
    def zeros_plus_columns(x):
        return x.new_zeros(x.shape[0], 2) + x[:, :2]
    return zeros_plus_columns


def test_a_layout_decided_on_a_symbol_by_an_inequality_compiles():
    """new_zeros(n, 2) + x[:, :2]: ordering the operands' dims decides an inequality on the
    rows' symbol, which sympy solves as a relation, not a list of values; the recompiled graph
    compiles (it ran eagerly, a TypeError in the guard) and serves every later size (torch's 2)."""
    calls = [[_rand((n, 3), seed=n)] for n in (2, 3, 4, 5)]
    count, reasons, ours = _run_both(_zeros_plus_columns, calls)
    assert ours.recompiles == count == 2 and len(ours.graphs) == 2 and not ours.break_reasons


def _root(T):
    def root(x, s):
        return x * math.sqrt(s)
    return root


def _rounded(T):
    def rounded(x, s):
        return x * round(s) + math.floor(s) - math.ceil(s)
    return rounded


@pytest.mark.parametrize("make, values", [(_root, [2.0, 3.0, 5.0, 7.0]), (_root, [2, 3, 5, 7]),
                                          (_rounded, [2.4, 3.6, 5.5, 6.5])])
def test_math_of_a_number_argument_keeps_it_a_symbol(make, values):
    """``math.sqrt(s)``, ``round(s)``, ``math.floor(s)`` of an argument made a symbol stay
    symbols (torch's ``sym_sqrt``, ``__round__``...): one recompile, not one per value."""
    count, reasons, ours = _run_both(make, [[_rand(3), v] for v in values])
    assert ours.recompiles == count == 2 and not ours.break_reasons


def _divide_and_remainder(T):
    def divide_and_remainder(x):
        return x // 3 + x % 3 - T.fmod(x, 2)
    return divide_and_remainder


def test_floor_division_and_remainder_of_an_int_tensor_take_dynamic_sizes():
    """``x // 3`` and ``x % 3`` trace on a tensor whose size is a symbol: the recompile's graph
    serves every later size, as torch's."""
    count, reasons, ours = _run_both(_divide_and_remainder, [[np.arange(n) - 4] for n in (4, 5, 7, 9)])
    assert ours.recompiles == count == 2 and not ours.break_reasons
    assert _ours(ours.recompile_reasons) == reasons


def _pair_sum(T):
    def pair_sum(*xs):
        return xs[0] + xs[1]
    return pair_sum


def test_tensors_gathered_by_star_args_are_named_as_dynamo_names_them():
    """``def f(*xs)``: the graph's inputs are ``xs[0]``, ``xs[1]`` (Dynamo's ``L_xs_0_``), and so
    is a recompile reason."""
    graphs = []
    count, reasons, ours = _run_both(_pair_sum, [[_rand(3), _rand(3)], [_rand(4), _rand(4)]], graphs=graphs)
    theirs = [p.name[2:-1] for p in graphs[0].graph.nodes if p.op == "placeholder"]
    assert [p.name[:-2] for p in ours.graphs[0].graph.nodes if p.op == "placeholder"] == theirs == ["xs_0", "xs_1"]
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons


def _first_half(T):
    def first_half(x):
        return x.chunk(2)[0] * 2
    return first_half


def _requiring_grad(T, args):
    return [a.requires_grad_() for a in args]


@pytest.mark.parametrize("prepare", [None, _requiring_grad], ids=["no grad", "requires grad"])
def test_a_piece_of_1_leaves_the_chunked_size_a_symbol(prepare):
    """Sizes 2, 3, 4, 5 chunked in two: at 3 the last piece has 1 row. Its contiguity is decided
    without a guard (its strides are those of a contiguous tensor whatever the size), split's
    backward saves the piece size ``(s77 + 1) // 2`` as a symbol and counts the last piece
    without a comparison, so nothing pins the size to 3: the recompile's graph serves 4 and 5,
    as torch's (1, 2, 2, 2 graphs; the package compiled 1, 2, 3, 3, and with grad 1, 2, 3, 4)."""
    calls = [[_rand((n, 3))] for n in (2, 3, 4, 5)]
    count, reasons, ours = _run_both(_first_half, calls, prepare=prepare)
    assert ours.recompiles == count == 2 and _ours(ours.recompile_reasons) == reasons
    if prepare is not None:     # the gradient of the general graph, at a size it was not traced at
        x_i, x_t = (T.tensor(_rand((5, 3), 1), requires_grad=True) for T in (internals, torch))
        ours(x_i).sum().backward()
        _first_half(torch)(x_t).sum().backward()
        np.testing.assert_array_equal(x_i.grad.to_torch().numpy(), x_t.grad.numpy())
        assert ours.recompiles == 2


def _first_rows_sum(T):
    def first_rows_sum(x, n):
        return x[:n].sum()
    return first_rows_sum


def test_a_slice_to_1_with_grad_pins_its_bound_as_aotautograd_does():
    """``x[:n].sum()`` with x requiring grad, n = 0, 1, 2, 3: the package compiles the joint graph
    of AOTAutograd, whose metadata asks whether the backward's rows ``n`` are 1 (torch's
    ``is_contiguous``, with a guard on a backed size): at n = 1 that pins n, and 2 compiles once
    more. torch.compile through AOTAutograd (``aot_eager``, as Inductor) counts the same 1, 2, 3
    (and 3 for n = 3); its eager backend (1, 2, 2) traces no backward, so no guard of it."""
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    theirs = torch.compile(_first_rows_sum(torch), backend=counter)
    ours = internals.compile(_first_rows_sum(internals))
    counts = []
    for n in (0, 1, 2):
        x_t, x_i = torch.arange(6.0, requires_grad=True), internals.arange(6.0, requires_grad=True)
        theirs(x_t, n).backward()
        ours(x_i, n).backward()
        np.testing.assert_array_equal(x_i.grad.to_torch().numpy(), x_t.grad.numpy())
        counts.append((ours.recompiles, counter.frame_count))
    assert counts == [(1, 1), (2, 2), (3, 3)]


class _Settings:
    """A plain object a module holds: its numbers are read as ``self.settings.scale``."""

    def __init__(self, scale):
        self.scale = scale


def _configured(T):
    class Configured(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.settings, self.table = _Settings(1.0), {"shift": 1}

        def forward(self, x):
            return x * self.settings.scale + self.table["shift"]
    return Configured()


def _nested_entry(T):
    def nested_entry(x, options):
        return x * options["affine"]["scale"] - options["affine"]["shift"]
    return nested_entry


def test_numbers_nested_in_module_attributes_become_inputs_after_one_change():
    """A float held by an object a module holds, changed before each call: torch's frame state
    follows the number by its source (``L['self'].settings.scale``), so its first change
    recompiles with it an input of the graph, and that graph serves every later value (torch:
    1, 2, 2, 2 graphs). An int a module holds (``L['self'].table['shift']``) is a setting to
    torch, a constant guarded by value: each new one compiles again (then 3, 4). Values and the
    input's gradient are eager's."""
    torch._dynamo.reset()
    counter = CompileCounter()
    modules = {T: _configured(T) for T in (torch, internals)}
    theirs, ours = torch.compile(modules[torch], backend=counter), internals.compile(modules[internals])
    x = _rand(3)
    counts = []
    for scale, shift in ((1.0, 1), (2.5, 1), (-3.0, 1), (0.5, 1), (0.5, 2), (1.5, 3)):
        for T in (torch, internals):
            modules[T].settings.scale, modules[T].table["shift"] = scale, shift
        x_t, x_i = torch.tensor(x, requires_grad=True), internals.tensor(x, requires_grad=True)
        want, got = theirs(x_t), ours(x_i)
        want.sum().backward(), got.sum().backward()
        np.testing.assert_array_equal(got.detach().to_torch().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(x_i.grad.to_torch().numpy(), x_t.grad.numpy())
        counts.append((counter.frame_count, len(ours.graphs)))
    print("graphs (torch, ours):", counts)
    assert [o for _, o in counts] == [t for t, _ in counts] == [1, 2, 2, 2, 3, 4] and not ours.break_reasons


def test_numbers_nested_in_dict_entries_become_inputs_after_one_change():
    """A number two dicts deep in an argument (``L['options']['affine']['scale']``): after its
    first change it is an input, as torch marks that source dynamic (torch: 1, 2, 2, 2 graphs);
    the entry it left unchanged stays a constant of the graph."""
    x = _rand(3)
    calls = [[x, {"affine": {"scale": s, "shift": 1}}] for s in (1.0, 2.0, 3.0, 4.0)]
    count, _, ours = _run_both(_nested_entry, calls)
    print("graphs: torch", count, "ours", len(ours.graphs))
    assert len(ours.graphs) == count == 2
    count, _, ours = _run_both(_nested_entry, calls + [[x, {"affine": {"scale": 4.0, "shift": 2}}]])
    assert len(ours.graphs) == count == 3       # the shift changed: one more graph, both inputs


def _reads_closed_over(T):
    """A function reading numbers from a dict and an object it closes over (``L['box']['k']``,
    ``L['o'].n``: Dynamo names the frame's free variables among its locals), and what changes
    them between calls."""
    box, o = {"k": 1.0}, _Settings(0.5)
    o.n = 2

    def reads(x):
        return x * box["k"] * o.n + o.scale

    def change():
        box["k"] += 1.0
        o.n += 1
        o.scale *= 3
    return reads, change


def test_numbers_in_closed_over_containers_become_inputs_after_one_change():
    """A float in a closed-over dict, an int and a float on a closed-over object, each changed
    between calls: Dynamo's frame state follows them by source, so the first change recompiles
    with them inputs, and that graph serves every later value (torch: 1, 2, 2, 2 graphs; the
    package compiled once per value). Values are eager's."""
    torch._dynamo.reset()
    counter = CompileCounter()
    (t_fn, t_change), (i_fn, i_change) = _reads_closed_over(torch), _reads_closed_over(internals)
    theirs, ours = torch.compile(t_fn, backend=counter), internals.compile(i_fn)
    x, counts = _rand(3), []
    for _ in range(4):
        want, got = theirs(torch.tensor(x)), ours(internals.tensor(x))
        np.testing.assert_array_equal(got.to_torch().numpy(), want.numpy())
        counts.append((counter.frame_count, len(ours.graphs)))
        t_change(), i_change()
    assert [o for _, o in counts] == [t for t, _ in counts] == [1, 2, 2, 2] and not ours.break_reasons


def _repeated(T):
    def repeated(x, options):
        for _ in range(options["times"]):
            x = x * 2
        return x
    return repeated


def test_a_nested_int_a_guard_pins_is_checked_as_that_number():
    """``range(options['times'])`` pins the symbol made of the entry (torch guards it ``== 3``):
    each new value compiles again, never a graph of another count of turns (torch: 1, 2, 3, 3)."""
    x = _rand(3)
    count, _, ours = _run_both(_repeated, [[x, {"times": n}] for n in (2, 3, 4, 3)])
    assert len(ours.graphs) == count == 3
