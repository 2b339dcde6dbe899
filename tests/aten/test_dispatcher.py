"""The dispatcher against torch's: key sets, key order, thread-local sets, dispatch tables,
registration through Library, Python dispatch, the profiler and dtype-dispatch errors."""
import re
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error, logging_modes
from helpers import dispatch_table as table
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

import internals
from internals.aten import dispatcher
from internals.c10.dispatch_key import DispatchKey
from internals.utils._python_dispatch import TorchDispatchMode
from internals.utils._pytree import tree_map

pytestmark = pytest.mark.filterwarnings("ignore:.*Overriding a previously registered kernel")

OURS = set(DispatchKey.__members__)


def names(key_set):
    """The key names of a printed DispatchKeySet (torch's or ours), in printed order."""
    inside = re.fullmatch(r"DispatchKeySet\((.*)\)", str(key_set)).group(1)
    return [k.strip() for k in inside.split(",") if k.strip()]


def restricted(torch_key_set):
    """torch's keys, restricted to the ones internals implements."""
    return [k for k in names(torch_key_set) if k in OURS]


# ---------------------------------------------------------------------- keys and their order
def test_key_order_is_torchs():
    assert [k.name for k in DispatchKey] == restricted(torch._C._dispatch_keyset_full())
    assert names(internals._C._dispatch_keyset_full()) == [k.name for k in DispatchKey]


TENSORS = {
    "float": lambda lib: lib.ones(2),
    "int64": lambda lib: lib.ones(2, dtype=lib.int64),
    "bool": lambda lib: lib.ones(2, dtype=lib.bool),
    "requires_grad": lambda lib: lib.ones(2, requires_grad=True),
    "view": lambda lib: lib.ones(2, 3).t(),
    "wrapped": lambda lib: lib.ones(2) * 2,
}


@pytest.mark.parametrize("case", sorted(TENSORS))
def test_tensor_key_sets(case):
    make = TENSORS[case]
    assert names(internals._C._dispatch_keys(make(internals))) == restricted(torch._C._dispatch_keys(make(torch)))


@pytest.mark.parametrize("case", sorted(TENSORS))
def test_inference_tensors_lack_autograd_keys(case):
    with torch.inference_mode():
        theirs = torch._C._dispatch_keys(TENSORS[case](torch))
    with internals.inference_mode():
        ours = internals._C._dispatch_keys(TENSORS[case](internals))
    assert names(ours) == restricted(theirs)


def test_views_made_in_inference_mode_keep_their_base_keys():
    t, i = torch.ones(2, 3), internals.ones(2, 3)
    with torch.inference_mode(), internals.inference_mode():
        assert names(internals._C._dispatch_keys(i.t())) == restricted(torch._C._dispatch_keys(t.t()))


def test_is_inference():
    def flags(lib):
        normal = lib.ones(2, 3)
        with lib.inference_mode():
            made, view_of_normal, view_of_made = lib.ones(2), normal.t(), None
            view_of_made = made[:1]
        with lib.no_grad():
            under_no_grad = lib.ones(2)
        outside = made + 1                    # an op run outside the mode makes a normal tensor
        return [t.is_inference() for t in (normal, made, view_of_normal, view_of_made, under_no_grad, outside)]
    assert flags(internals) == flags(torch) == [False, True, False, True, False, False]


def test_cuda_key_set():
    # torch (CPU wheel) cannot make a CUDA tensor here; on a GPU it prints exactly this set.
    keys = internals._C._dispatch_keys(internals.ones(2, device="cuda"))
    assert names(keys) == ["CUDA", "ADInplaceOrView", "AutogradCUDA", "AutocastCUDA"]


# ---------------------------------------------------------------------- thread-local sets
def tls_sets(lib):
    return (restricted(torch._C._dispatch_tls_local_include_set()) if lib is torch
            else names(internals._C._dispatch_tls_local_include_set()),
            restricted(torch._C._dispatch_tls_local_exclude_set()) if lib is torch
            else names(internals._C._dispatch_tls_local_exclude_set()))


def test_default_thread_local_sets():
    assert tls_sets(internals) == tls_sets(torch)


def test_inference_mode_thread_local_sets():
    with torch.inference_mode():
        theirs = tls_sets(torch)
    with internals.inference_mode():
        ours = tls_sets(internals)
    # torch excludes the whole Autograd functionality (printed as AutogradOther); internals
    # lists its per-backend keys. Same keys skipped, so compare what is included, and that
    # every autograd key is excluded.
    assert ours[0] == theirs[0]
    assert {"AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta"} <= set(ours[1])
    assert tls_sets(internals) == tls_sets(torch)   # restored on exit


def test_mode_adds_python_keys_while_active():
    seen = {}

    class Theirs(TorchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen["torch_inside"] = tls_sets(torch)[0]
            return func(*args, **(kwargs or {}))

    class Ours(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen["ours_inside"] = tls_sets(internals)[0]
            return func(*args, **(kwargs or {}))

    with Theirs():
        seen["torch_active"] = tls_sets(torch)[0]
        torch.ones(2).neg()
    with Ours():
        seen["ours_active"] = tls_sets(internals)[0]
        internals.ones(2).neg()
    assert seen["ours_active"] == seen["torch_active"] == ["BackendSelect", "Python", "ADInplaceOrView",
                                                           "PythonTLSSnapshot"]
    assert seen["ours_inside"] == seen["torch_inside"] == ["BackendSelect", "ADInplaceOrView"]
    assert tls_sets(internals) == tls_sets(torch)


def test_mode_sees_arguments_away_from_their_defaults():
    """As torch's ``parseIValuesToPyArgsKwargs``: trailing positional arguments and keyword
    arguments at their schema defaults are left out (``alpha=1`` given or not, a mode sees ``{}``)."""
    def calls(lib):
        x = lib.ones(2, 3)
        return [lambda: x + x, lambda: x.add(x, alpha=1), lambda: x.add(x, alpha=2), lambda: lib.sub(x, x, alpha=1.5),
                lambda: x.sum(dtype=None), lambda: x.sum(0, dtype=lib.float64), lambda: lib.nn.functional.gelu(x),
                lambda: lib.nn.functional.gelu(x, approximate="tanh"), lambda: x.div(x, rounding_mode=None),
                lambda: x.div(x, rounding_mode="floor"), lambda: x.sum(0), lambda: x.sum(0, keepdim=True),
                lambda: x.mean(1), lambda: x.max(1), lambda: lib.cat([x, x]), lambda: lib.cat([x, x], 1),
                lambda: x.var(1), lambda: x.topk(2), lambda: x.argmax(), lambda: lib.softmax(x, 1),
                # factories: the binding fills in a factory's device (not a *_like's), randint's dtype
                lambda: lib.ones(2), lambda: lib.zeros_like(x), lambda: lib.empty(3), lambda: lib.arange(4),
                lambda: x.new_ones(2), lambda: lib.zeros(2, dtype=lib.float64), lambda: lib.randint(5, (2,)),
                lambda: lib.randperm(3), lambda: lib.randint(5, (2,), dtype=lib.float32)]

    def logged(lib, base):
        seen = []

        class Logging(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                shown = [a if isinstance(a, (int, float, bool, type(None))) else type(a).__name__ for a in args]
                seen.append((str(func), shown, {k: str(v).replace("internals.", "torch.") for k, v in kwargs.items()}))
                return func(*args, **kwargs)
        for call in calls(lib):
            with Logging():
                call()
        return seen
    ours, theirs = logged(internals, TorchDispatchMode), logged(torch, TorchMode)
    assert [kw for _, _, kw in theirs[:10]] == [
        {}, {}, {"alpha": "2"}, {"alpha": "1.5"}, {}, {"dtype": "torch.float64"}, {}, {"approximate": "tanh"},
        {"rounding_mode": "None"}, {"rounding_mode": "floor"}]      # div.Tensor_mode's rounding_mode has no default
    assert ("aten.sum.dim_IntList", ["Tensor", "list"], {}) in theirs
    assert [(f, [a.replace("Tensor", "X") if isinstance(a, str) else a for a in args], kw) for f, args, kw in ours] == \
        [(f, [a.replace("Tensor", "X") if isinstance(a, str) else a for a in args], kw) for f, args, kw in theirs]


def test_record_function_is_a_range_and_two_operators():
    """``record_function``'s enter and exit are ``profiler::`` operators (a mode logs them, an
    optimizer's step and zero_grad make them); the profiler shows the label as one event."""
    def run(lib, base):
        seen = []

        class Logging(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **kwargs)
        p = lib.nn.Parameter(lib.ones(2))
        optimizer = lib.optim.SGD([p], lr=0.1)
        p.grad = lib.ones(2)
        with Logging():
            optimizer.step()
        with lib.profiler.profile() as prof:
            with lib.autograd.profiler.record_function("label"):
                p.detach() * 2
            optimizer.zero_grad()
        events = [(e.name, e.cpu_parent.name if e.cpu_parent else None) if lib is torch else
                  (e.name, e.parent.name if e.parent else None) for e in prof.events()]
        return seen, events
    ours, theirs = run(internals, TorchDispatchMode), run(torch, TorchMode)
    assert ours[0] == theirs[0] == ["profiler._record_function_enter_new.default", "aten.add_.Tensor",
                                    "profiler._record_function_exit._RecordFunction"]
    names = {"label", "aten::detach", "aten::mul", "Optimizer.zero_grad#SGD.zero_grad"}
    assert [e for e in ours[1] if e[0] in names] == [e for e in theirs[1] if e[0] in names] == [
        ("label", None), ("aten::detach", "label"), ("aten::mul", "label"), ("Optimizer.zero_grad#SGD.zero_grad", None)]


# ---------------------------------------------------------------------- dispatch tables
# Keys whose entries mean the same in both libraries for a strided CPU operator. (CUDA is left
# out: torch's CPU wheel has no CUDA kernels, so its table fills CUDA from a composite.)
SHARED = ["CPU", "BackendSelect", "Python", "ADInplaceOrView", "AutogradCPU", "AutocastCPU", "AutocastCUDA",
          "PythonTLSSnapshot"]


@pytest.mark.parametrize("op", ["aten::add.Tensor", "aten::mul.Tensor", "aten::mm", "aten::exp", "aten::add_.Tensor"])
def test_dispatch_table_matches_torch(op):
    ours, theirs = table(internals._C._dispatch_dump_table(op)), table(torch._C._dispatch_dump_table(op))
    for key in SHARED:
        assert ours.get(key) == theirs.get(key), key
    assert set(k for k in ours if k.startswith("Autograd")) == {"AutogradOther", "AutogradCPU", "AutogradCUDA",
                                                                "AutogradMeta"}


def test_tables_filled_at_import_are_the_ones_computed_now():
    """``import internals`` computes each table once, after all its registrations
    (``tables_computed_once``): an operator it missed would keep an older or empty table."""
    before = {name: (op.table, op.fallthrough_bits, op.runnable) for name, op in dispatcher.operators.items()}
    for op in dispatcher.operators.values():
        op.update_table()
    assert {name: (op.table, op.fallthrough_bits, op.runnable) for name, op in dispatcher.operators.items()} == before


def test_registrations_inside_tables_computed_once_update_on_the_way_out():
    op = dispatcher.find("aten::exp")
    kernel, table = op.kernels["CPU"], dict(op.table)
    replacement = dispatcher.KernelFunction(lambda x: "replaced")
    try:
        with dispatcher.tables_computed_once():
            dispatcher.impl("aten::exp", "CPU", replacement)
            assert op.table == table                    # stale until the end
        assert op.table[DispatchKey.CPU] == (replacement, "kernel")
    finally:
        dispatcher.impl("aten::exp", "CPU", kernel)
    assert op.table == table


def test_inplace_ops_get_an_ad_inplace_or_view_kernel():
    assert table(internals._C._dispatch_dump_table("aten::add_.Tensor"))["ADInplaceOrView"] == (False, "kernel")
    assert table(internals._C._dispatch_dump_table("aten::add.Tensor"))["ADInplaceOrView"] == (True, "backend fallback")


def test_dump_shows_schema_and_registrations():
    dump = internals._C._dispatch_dump("aten::add.Tensor")
    theirs = torch._C._dispatch_dump("aten::add.Tensor")
    assert dump.splitlines()[:2] == theirs.splitlines()[:2]      # name and schema, verbatim
    assert "native_functions.yaml" in dump.splitlines()[2]
    assert re.search(r"^CPU: registered at internals/aten/native/binary_ops\.py:\d+ ", dump, re.M)


def test_composite_implicit_fills_backends_and_autograd():
    t = table(internals._C._dispatch_dump_table("aten::matmul"))
    assert t["CPU"] == t["CUDA"] == t["AutogradCPU"] == (False, "math kernel")


# ---------------------------------------------------------------------- tracing a call
def test_trace_of_x_times_2_plus_1():
    x = internals.ones(3)
    with dispatcher.trace() as log:
        x * 2 + 1
    assert [(op, key) for op, key, _, _ in log] == [
        ("aten::mul.Tensor", "AutogradCPU"), ("aten::mul.Tensor", "CPU"),
        ("aten::add.Tensor", "AutogradCPU"), ("aten::add.Tensor", "CPU")]


def test_inplace_visits_ad_inplace_or_view_and_bumps_version():
    x, t = internals.zeros(3), torch.zeros(3)
    with dispatcher.trace() as log:
        x.add_(1)
    t.add_(1)
    assert [key for _, key, _, _ in log] == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    assert x._version == t._version == 1


def test_a_refused_inplace_call_leaves_the_excluded_keys_as_they_were():
    """ADInplaceOrView puts back the thread's excluded keys when the kernel below it raises (an
    int64 tensor cannot take a float sum), as torch's guard does: the next call dispatches as usual.
    (Entered by a redispatch to its key: the autograd kernel above it would put them back too.)"""
    from internals.c10.dispatch_key import DispatchKeySet
    from internals.c10.local_dispatch_key_set import tls
    before = tls.excluded.bits
    keys = DispatchKeySet([DispatchKey.ADInplaceOrView, DispatchKey.CPU])
    a, b = internals.zeros(3, dtype=internals.int64), internals.ones(3)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dispatcher.aten_ops["add_.Tensor"].redispatch(keys, a, b)
    assert tls.excluded.bits == before
    x = internals.zeros(3, requires_grad=True)
    assert (x * 2).grad_fn.name() == "MulBackward0"


def test_inference_mode_skips_autograd_and_version_tracking_layers():
    with internals.inference_mode():
        x = internals.zeros(3)
        with dispatcher.trace() as log:
            x.add_(1)
    assert [key for _, key, _, _ in log] == ["CPU"]


def test_no_grad_still_visits_autograd():
    x = internals.zeros(3)
    with internals.no_grad(), dispatcher.trace() as log:
        x.add_(1)
    assert [key for _, key, _, _ in log] == ["AutogradCPU", "ADInplaceOrView", "CPU"]


def test_factories_and_kernels_do_not_bump_versions():
    for lib in (torch, internals):
        assert lib.zeros(3)._version == 0
        assert lib.ones(2, 2).to(lib.float64)._version == 0
        assert (lib.ones(3) ** 1)._version == 0


def test_views_share_the_version_counter():
    x, t = internals.zeros(4), torch.zeros(4)
    vx, vt = x[1:], t[1:]
    vx.mul_(2)
    vt.mul_(2)
    assert (x._version, vx._version) == (t._version, vt._version) == (1, 1)


# ---------------------------------------------------------------------- Library
_counter = [0]


def fresh_ns():
    _counter[0] += 1
    return f"test_ns_{_counter[0]}"


def both_libraries(kind="DEF"):
    ns = fresh_ns()
    return ns, torch.library.Library(ns, kind), internals.library.Library(ns, kind)


def test_define_impl_and_call():
    ns, lt, li = both_libraries()
    for lib, _mod in ((lt, torch), (li, internals)):
        assert lib.define("twice(Tensor x) -> Tensor") == "twice"
        lib.impl("twice", lambda x: x * 2, "CPU")
    ours = getattr(internals.ops, ns).twice(internals.tensor([1., 2.]))
    theirs = getattr(torch.ops, ns).twice(torch.tensor([1., 2.]))
    assert ours.tolist() == theirs.tolist() == [2., 4.]
    assert str(getattr(internals.ops, ns).twice.default._schema) == str(getattr(torch.ops, ns).twice.default._schema)


def test_kernel_for_one_key_is_chosen_by_that_key():
    ns, lt, li = both_libraries()
    for lib, _mod in ((lt, torch), (li, internals)):
        lib.define("which(Tensor x) -> Tensor")
        lib.impl("which", lambda x: x * 0 + 1, "CPU")
        lib.impl("which", lambda x: x * 0 + 2, "AutogradCPU")
    ours = getattr(internals.ops, ns).which(internals.zeros(1))
    theirs = getattr(torch.ops, ns).which(torch.zeros(1))
    assert ours.tolist() == theirs.tolist() == [2.]
    with internals.inference_mode(), torch.inference_mode():      # autograd keys excluded: CPU runs
        assert getattr(internals.ops, ns).which(internals.zeros(1)).tolist() == \
            getattr(torch.ops, ns).which(torch.zeros(1)).tolist() == [1.]


def test_fallthrough_passes_the_key_by():
    ns, lt, li = both_libraries()
    for lib, mod in ((lt, torch), (li, internals)):
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 0 + 1, "CPU")
        lib.impl("f", lambda x: x * 0 + 2, "AutogradCPU")
        lib.impl("f", mod.library.fallthrough_kernel, "AutogradCPU")
    assert getattr(internals.ops, ns).f(internals.zeros(1)).tolist() == [1.]
    assert getattr(torch.ops, ns).f(torch.zeros(1)).tolist() == [1.]
    assert table(internals._C._dispatch_dump_table(f"{ns}::f"))["AutogradCPU"][0] is True


def test_redispatch_with_keyset():
    ns = fresh_ns()
    li = internals.library.Library(ns, "DEF")
    li.define("g(Tensor x) -> Tensor")
    li.impl("g", lambda x: x + 1, "CPU")
    li.impl("g", lambda keys, x: getattr(internals.ops, ns).g.default.redispatch(
        keys.below(DispatchKey.AutogradOther), x) * 10, "AutogradCPU", with_keyset=True)
    assert getattr(internals.ops, ns).g(internals.zeros(1)).tolist() == [10.]


def test_missing_backend_error():
    ns, lt, li = both_libraries()
    for lib in (lt, li):
        lib.define("cpu_only(Tensor x) -> Tensor")
        lib.impl("cpu_only", lambda x: x, "CPU")
    # torch here has no CUDA: its sparse backend shows the same refusal.
    ours, theirs = assert_same_error(lambda: getattr(internals.ops, ns).cpu_only(internals.zeros(1, device="cuda")),
                                     lambda: getattr(torch.ops, ns).cpu_only(torch.zeros(1).to_sparse()))
    assert str(ours).startswith(f"Could not run '{ns}::cpu_only' with arguments from the 'CUDA' backend.")
    assert str(theirs).startswith(f"Could not run '{ns}::cpu_only' with arguments from the 'SparseCPU' backend.")


def test_duplicate_definition_is_an_error():
    ns, lt, li = both_libraries()
    lt.define("d(Tensor x) -> Tensor")
    li.define("d(Tensor x) -> Tensor")
    ours, theirs = assert_same_error(lambda: li.define("d(Tensor x) -> Tensor"),
                                     lambda: lt.define("d(Tensor x) -> Tensor"))
    assert str(theirs).startswith(str(ours).split(" Each")[0])


def test_second_def_library_for_a_namespace_is_an_error():
    ns, lt, li = both_libraries()
    ours, theirs = assert_same_error(lambda: internals.library.Library(ns, "DEF"),
                                     lambda: torch.library.Library(ns, "DEF"))
    assert str(theirs).startswith(str(ours))


def test_unknown_kind_is_an_error():
    assert_same_error(lambda: internals.library.Library("x", "FOO"), lambda: torch.library.Library("x", "FOO"))


def test_overriding_an_aten_kernel_warns_and_is_undone_with_the_library():
    lt, li = torch.library.Library("aten", "IMPL"), internals.library.Library("aten", "IMPL")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        li.impl("neg", lambda x: x * 0 + 42, "CPU")
    assert any("Overriding a previously registered kernel" in str(w.message) for w in caught)
    assert internals.ones(2).neg().tolist() == [42., 42.]
    li._destroy()
    lt._destroy()
    assert internals.ones(2).neg().tolist() == torch.ones(2).neg().tolist() == [-1., -1.]


def test_destroying_a_def_library_removes_its_operators():
    ns = fresh_ns()
    li = internals.library.Library(ns, "DEF")
    li.define("gone(Tensor x) -> Tensor")
    li._destroy()
    with pytest.raises(AttributeError):
        getattr(internals.ops, ns).gone  # noqa: B018  the attribute access itself is what must raise
    internals.library.Library(ns, "DEF")      # the namespace is free again


def test_an_operators_overloads_follow_later_definitions_and_removals():
    """The overloads a name was found with are kept between lookups: an overload defined later,
    and an operator taken away, are seen at the next lookup, as in torch."""
    ns, lt, li = both_libraries()
    seen = {}
    for lib, mod in ((lt, torch), (li, internals)):
        lib.define("probe(Tensor x) -> Tensor")
        before = getattr(mod.ops, ns).probe.overloads()
        lib.define("probe.pair(Tensor x, Tensor y) -> Tensor")
        after = getattr(mod.ops, ns).probe.overloads()
        lib._destroy()
        seen[mod] = before, sorted(after), hasattr(getattr(mod.ops, ns), "probe")
    assert seen[internals] == seen[torch] == (["default"], ["default", "pair"], False)


# ---------------------------------------------------------------------- Python dispatch
class _Log:
    def __init__(self):
        self.calls = []


PROGRAMS = {
    "x*2+1": lambda lib, x: x * 2 + 1,
    "sum": lambda lib, x: x.sum(),
    "sum_dim": lambda lib, x: x.sum(0),
    "mean": lambda lib, x: x.mean(),
    "matmul_2d": lambda lib, x: x @ x.t(),
    "scalar_overloads": lambda lib, x: ((x ** 2) + (2 ** x) + (1 - x) > 0.5) == (x <= 0.25),
    "softmax": lambda lib, x: x.softmax(1).log_softmax(0),
    "views": lambda lib, x: x.t().transpose(0, 1).unsqueeze(0).permute(2, 1, 0),
    "inplace": lambda lib, x: x.clone().mul_(2).add_(1),
    "relu_exp": lambda lib, x: x.relu().exp().neg(),
    "compare_where": lambda lib, x: lib.where(x > 0.5, x, x * 0),
    "max_dim": lambda lib, x: x.max(1),
    "max_other": lambda lib, x: (lib.max(x, x.flip(0)), x.min(x * 2), lib.max(x, x, out=lib.empty(0))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_logging_mode_sees_the_same_operators(name):
    log_t, log_i = [], []
    theirs, ours = logging_modes(log_t, log_i)
    xt = torch.arange(6.).reshape(2, 3) / 6
    xi = internals.from_torch(xt)
    with theirs:
        PROGRAMS[name](torch, xt)
    with ours:
        PROGRAMS[name](internals, xi)
    assert log_i == log_t


class WrapperTensor(internals.Tensor):
    """A wrapper subclass that counts the operators run on it."""
    seen = []

    @staticmethod
    def __new__(cls, elem):
        r = internals.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(str(func))

        def unwrap(t):
            return t.elem if isinstance(t, cls) else t

        def wrap(t):
            return cls(t) if isinstance(t, internals.Tensor) and not isinstance(t, cls) else t
        return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))


def test_subclass_carries_python_keys():
    w = WrapperTensor(internals.ones(2))
    assert names(internals._C._dispatch_keys(w)) == ["CPU", "Python", "ADInplaceOrView", "AutogradCPU",
                                                     "AutocastCPU", "PythonTLSSnapshot"]


def test_subclass_sees_every_operator_and_results_stay_wrapped():
    WrapperTensor.seen = []
    w = WrapperTensor(internals.tensor([1., 2.]))
    out = (w * 2 + 1).exp().sum()
    assert isinstance(out, WrapperTensor)
    assert WrapperTensor.seen == ["aten.mul.Tensor", "aten.add.Tensor", "aten.exp.default", "aten.sum.default"]
    assert out.elem.item() == pytest.approx(torch.tensor([1., 2.]).mul(2).add(1).exp().sum().item())


def test_wrapper_subclass_has_no_data_of_its_own():
    w = WrapperTensor(internals.ones(2))
    with pytest.raises(RuntimeError):
        w.untyped_storage().data_ptr()


def test_op_overload_objects_print_like_torchs():
    ours, theirs = internals.ops.aten.add.Tensor, torch.ops.aten.add.Tensor
    assert (str(ours), repr(ours), ours.__name__, str(ours._schema), ours.name(), repr(ours.overloadpacket)) == \
        (str(theirs), repr(theirs), theirs.__name__, str(theirs._schema), theirs.name(), repr(theirs.overloadpacket))
    assert internals.ops.aten.add.Tensor is internals.ops.aten.add.Tensor


OVERLOAD_CALLS = {
    "unbind": lambda lib, x: lib.ops.aten.unbind(x),
    "unbind_int": lambda lib, x: lib.ops.aten.unbind.int(x, 1),
    "split": lambda lib, x: lib.ops.aten.split(x, 1),
    "split_sizes": lambda lib, x: lib.ops.aten.split(x, [1, 1]),
    "split_Tensor": lambda lib, x: lib.ops.aten.split.Tensor(x, 1),
    "foreach_add": lambda lib, x: lib.ops.aten._foreach_add([x, x], 1.0),
    "foreach_add_List": lambda lib, x: lib.ops.aten._foreach_add.List([x], [x]),
    "add_number": lambda lib, x: lib.ops.aten.add(x, 1),
    "sum_dim": lambda lib, x: lib.ops.aten.sum(x, 1),
    "pow_Scalar": lambda lib, x: lib.ops.aten.pow(2, x),
    "max_dim": lambda lib, x: lib.ops.aten.max(x, 1),
    "max_other": lambda lib, x: lib.ops.aten.max(x, x.flip(0)),
    "min_other": lambda lib, x: lib.ops.aten.min.other(x, x * 2),
    "max_dim_overload": lambda lib, x: lib.ops.aten.max.dim(x, 0),
    "sort": lambda lib, x: lib.ops.aten.sort(x),
    "topk": lambda lib, x: lib.ops.aten.topk.default(x, 1),
    "linalg_qr": lambda lib, x: lib.ops.aten.linalg_qr.default(x),
}


@pytest.mark.parametrize("case", OVERLOAD_CALLS)
def test_op_packets_pick_torchs_overload_and_return_lists(case):
    """Calling ``ops.aten.<name>`` picks the overload torch picks (seen by a dispatch mode), and
    an operator returning ``Tensor[]`` gives a list, several returns a plain tuple, as torch's do
    (``max(x, y)`` had no ``max.other`` to pick; ``max.dim`` gave a named tuple)."""
    def seen(mode_class, lib, x):
        names = []

        class Record(mode_class):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                names.append(str(func))
                return func(*args, **(kwargs or {}))

        with Record():
            result = OVERLOAD_CALLS[case](lib, x)
        return names, result

    t = torch.arange(6.).reshape(2, 3)
    their_names, theirs = seen(TorchMode, torch, t)
    our_names, ours = seen(TorchDispatchMode, internals, internals.from_torch(t))
    assert our_names == their_names
    assert type(ours).__name__ == type(theirs).__name__    # list, tuple (never a named tuple) or Tensor
    if isinstance(theirs, torch.Tensor):
        ours, theirs = [ours], [theirs]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(a, b)


def test_op_packet_with_no_fitting_schema_raises_torchs_error():
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.atan2(torch.ones(2), "a")
    with pytest.raises(RuntimeError) as ours:
        internals.ops.aten.atan2(internals.ones(2), "a")
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


# ---------------------------------------------------------------------- profiler
def test_profiler_counts_operators_like_torch():
    def run(lib, x):
        y = x * 2 + 1
        for _ in range(3):
            y = y.relu()
        return y.sum()

    xt = torch.ones(4, 4)
    with torch.profiler.profile(record_shapes=True) as pt:
        run(torch, xt)
    with internals.profiler.profile(record_shapes=True) as pi:
        run(internals, internals.from_torch(xt))
    names = ("aten::mul", "aten::add", "aten::relu", "aten::sum")
    theirs = {e.key: e.count for e in pt.key_averages() if e.key in names}
    ours = {e.key: e.count for e in pi.key_averages()}
    assert ours == theirs == {"aten::mul": 1, "aten::add": 1, "aten::relu": 3, "aten::sum": 1}
    mul = [e for e in pi.events() if e.name == "aten::mul"][0]
    assert mul.input_shapes == [[4, 4], []]


def test_profiler_nests_calls_and_splits_self_time():
    with internals.profiler.profile() as p:
        internals.ones(2, 3) @ internals.ones(3, 2)
    matmul = [e for e in p.events() if e.name == "aten::matmul"][0]
    assert [c.name for c in matmul.children] == ["aten::mm"]
    assert matmul.self_cpu_time_total == pytest.approx(matmul.cpu_time_total - matmul.children[0].cpu_time_total)


def test_profiler_table_has_torchs_columns():
    with internals.profiler.profile(record_shapes=True) as p:
        internals.ones(2) + 1
    text = p.key_averages(group_by_input_shape=True).table()
    header = text.splitlines()[1].split()
    assert " ".join(header) == "Name Self CPU % Self CPU CPU total % CPU total CPU time avg # of Calls Input Shapes"
    assert text.splitlines()[-1].startswith("Self CPU time total:")


# ---------------------------------------------------------------------- the second dispatch: dtypes
DTYPE_ERRORS = {
    "mm_bool": lambda lib: lib.ones(2, 2, dtype=lib.bool).mm(lib.ones(2, 2, dtype=lib.bool)),
    "abs_bool": lambda lib: lib.ones(2, dtype=lib.bool).abs(),
    "neg_bool": lambda lib: -lib.ones(2, dtype=lib.bool),
    "relu_bool": lambda lib: lib.ones(2, dtype=lib.bool).relu(),
    "softmax_long": lambda lib: lib.ones(2, dtype=lib.int64).softmax(0),
    "mean_long": lambda lib: lib.ones(2, dtype=lib.int64).mean(),
}


@pytest.mark.parametrize("case", sorted(DTYPE_ERRORS))
def test_dtype_dispatch_errors(case):
    ours, theirs = assert_same_error(lambda: DTYPE_ERRORS[case](internals), lambda: DTYPE_ERRORS[case](torch))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- autocast
@pytest.mark.parametrize("name", sorted(n for n in dispatcher.operators if n.startswith("aten::")))
def test_autocast_entries_match_torch(name):
    """Which operators have an Autocast kernel, per device, and which fall through."""
    theirs = table(torch._C._dispatch_dump_table(name))
    ours = table(internals._C._dispatch_dump_table(name))
    for key in ("AutocastCPU", "AutocastCUDA"):
        assert ours[key][1] == theirs[key][1], key


def test_autocast_runs_matmul_in_bfloat16_on_cpu():
    xt = torch.rand(3, 3, generator=torch.Generator().manual_seed(0))
    xi = internals.from_torch(xt)
    with torch.autocast("cpu"), internals.autocast("cpu"):
        theirs, ours = xt @ xt, xi @ xi
        assert tls_sets(internals)[1] == tls_sets(torch)[1]
        assert (xi + xi).dtype is internals.float32           # not on the list: falls through
    assert ours.dtype is internals.bfloat16 and theirs.dtype is torch.bfloat16
    assert ours.float().reshape(-1).tolist() == pytest.approx(theirs.float().reshape(-1).tolist(), rel=1e-2)


def _without_locations(dump):
    """A dispatch dump with its ``registered at <file>:<line>`` places removed (they name each test file)."""
    return re.sub(r"registered at \S+", "registered at", dump)


def test_impl_before_define_waits_for_the_schema():
    """torch accepts a kernel for an operator not defined yet: the operator exists by name, without a
    schema, and cannot be called until ``define`` gives it one."""
    ns = fresh_ns()
    libs = {mod: mod.library.Library(ns, "FRAGMENT") for mod in (torch, internals)}
    for lib in libs.values():
        lib.impl("later", lambda x: x * 3, "CPU")
    dumps = {mod: _without_locations(mod._C._dispatch_dump(f"{ns}::later")) for mod in libs}
    expected = f"name: {ns}::later\nschema: (none)\nCPU: registered at :: (none) [ boxed ]\n"
    assert dumps[internals] == dumps[torch] == expected
    for mod in libs:
        with pytest.raises(AttributeError):
            getattr(mod.ops, ns).later  # noqa: B018  the attribute access itself is what must raise
    for lib in libs.values():
        lib.define("later(Tensor x) -> Tensor")
    assert getattr(internals.ops, ns).later(internals.ones(2)).tolist() == \
        getattr(torch.ops, ns).later(torch.ones(2)).tolist() == [3., 3.]
    assert _without_locations(internals._C._dispatch_dump(f"{ns}::later")) == \
        _without_locations(torch._C._dispatch_dump(f"{ns}::later"))
    for lib in libs.values():
        lib._destroy()
    assert internals._C._dispatch_dump(f"{ns}::later") == torch._C._dispatch_dump(f"{ns}::later") == ""


def test_a_kernel_outlives_the_schema_of_another_library():
    """Destroying the library that defined an operator leaves the kernels other libraries gave it:
    the operator goes back to having no schema."""
    ns = fresh_ns()
    for mod in (torch, internals):
        definer, implementer = mod.library.Library(ns, "DEF"), mod.library.Library(ns, "IMPL")
        definer.define("kept(Tensor x) -> Tensor")
        implementer.impl("kept", lambda x: x, "CPU")
        definer._destroy()
        assert _without_locations(mod._C._dispatch_dump(f"{ns}::kept")) == \
            f"name: {ns}::kept\nschema: (none)\nCPU: registered at :: (none) [ boxed ]\n"
        implementer._destroy()
        assert mod._C._dispatch_dump(f"{ns}::kept") == ""


def test_python_dispatcher_runs_an_operators_python_kernel_as_torchs():
    """``dropout`` has a Python kernel in torch (``py_impl(CompositeImplicitAutograd)``): with the
    Python dispatcher on, eval-mode dropout returns a clone where the C++ composite returns its
    input itself -- in both libraries; off again, the input itself."""
    from torch._dispatch.python import enable_python_dispatcher as torch_enable

    from internals.aten.dispatcher import enable_python_dispatcher
    results = {}
    for lib, enable in ((torch, torch_enable), (internals, enable_python_dispatcher)):
        x = lib.ones(3)
        before = lib.nn.functional.dropout(x, 0.5, training=False) is x
        with enable():
            y = lib.nn.functional.dropout(x, 0.5, training=False)
            inside = (y is x, y.data_ptr() == x.data_ptr())
        results[lib.__name__] = (before, inside, lib.nn.functional.dropout(x, 0.5, training=False) is x)
    assert results["internals"] == results["torch"] == (True, (False, False), True)


AUTOGRAD_PYTHON_KERNELS = {
    "batch_norm without running statistics": lambda L, x, t: L.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm in eval": lambda L, x, t: L.nn.functional.batch_norm(x, x[0].detach(), x[1].detach().abs(),
                                                                     training=False),
    "multi_margin_loss p=2 weighted sum": lambda L, x, t: L.ops.aten.multi_margin_loss(
        x, t, 2, 0.5, x[0].detach().abs(), 2),
    "multi_margin_loss none": lambda L, x, t: L.ops.aten.multi_margin_loss(x, t, 1, 1, None, 0),
}


@pytest.mark.parametrize("name", AUTOGRAD_PYTHON_KERNELS)
def test_python_kernels_at_the_autograd_key_give_torchs_graph_and_values(name):
    """``native_batch_norm`` and ``multi_margin_loss`` have Python kernels at the Autograd key in
    torch: under the Python dispatcher the autograd graph is the one their calls make
    (``NativeBatchNormLegitBackward1``, the decomposition's ``MeanBackward0``...), the values and
    the gradients those of the operator."""
    from torch._dispatch.python import enable_python_dispatcher as torch_enable

    from internals.aten.dispatcher import enable_python_dispatcher

    def run(lib, enable):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.0], [0.3, 0.6, -0.9]],
                       dtype=lib.float64, requires_grad=True)
        t = lib.tensor([2, 0, 1, 1])
        with enable():
            out = AUTOGRAD_PYTHON_KERNELS[name](lib, x, t)
        grad, = lib.autograd.grad((out * out).sum(), [x])
        return type(out.grad_fn).__name__, out, grad
    (our_node, *ours), (their_node, *theirs) = run(internals, enable_python_dispatcher), run(torch, torch_enable)
    assert our_node == their_node
    for o, t in zip(ours, theirs, strict=True):
        internals.testing.check(o, t, rtol=1e-12, atol=1e-12)


def test_multi_margin_loss_python_kernel_raises_torchs_errors():
    from torch._dispatch.python import enable_python_dispatcher as torch_enable

    from internals.aten.dispatcher import enable_python_dispatcher

    def call(lib, enable):
        def go():
            with enable():
                return lib.ops.aten.multi_margin_loss(lib.ones(4, 3), lib.zeros(4, dtype=lib.int64), 3)
        return go
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch_enable)()
    with pytest.raises(RuntimeError) as ours:
        call(internals, enable_python_dispatcher)()
    assert str(ours.value) == str(theirs.value)


def test_a_modes_plain_tuple_reaches_the_caller_as_a_named_tuple():
    """A mode returns ``func``'s plain tuple; the binding still gives ``torch.return_types.max``."""
    def run(mode_class, lib):
        class Passthrough(mode_class):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        with Passthrough():
            return lib.arange(6.).reshape(2, 3).max(1)
    theirs, ours = run(TorchMode, torch), run(TorchDispatchMode, internals)
    assert type(ours).__name__ == type(theirs).__name__ == "max"
    assert_same(ours.values, theirs.values)
    assert_same(ours.indices, theirs.indices)


NAMED_RETURNS = {
    "max_dim": lambda lib, x: x.max(1),
    "torch_max_dim": lambda lib, x: lib.max(x, 0, keepdim=True),
    "sort": lambda lib, x: x.sort(descending=True),
    "aminmax": lambda lib, x: lib.aminmax(x, dim=1),
    "ops_aten_max_dim": lambda lib, x: lib.ops.aten.max.dim(x, 0),
}


@pytest.mark.parametrize("as_list", [False, True], ids=["tuple", "list"])
@pytest.mark.parametrize("case", NAMED_RETURNS)
def test_a_modes_tuple_becomes_the_bindings_named_tuple(case, as_list):
    """Under a dispatch mode that hands back a plain tuple (or a list), ``x.max(1)`` is still
    ``return_types.max``: the Python binding wraps what the dispatcher returns, as torch's does,
    while ``ops.aten.max.dim`` (no binding) stays a plain tuple."""
    def run(mode_class, lib, x):
        class Plain(mode_class):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                return list(out) if as_list and isinstance(out, tuple) else out

        with Plain():
            return NAMED_RETURNS[case](lib, x)

    t = torch.tensor([[3., 1., 2.], [0., 5., 4.]])
    theirs = run(TorchMode, torch, t)
    ours = run(TorchDispatchMode, internals, internals.from_torch(t))
    assert type(ours).__name__ == type(theirs).__name__
    for name in getattr(ours, "_fields", ()):      # torch's structseq names them too
        assert_same(getattr(ours, name), getattr(theirs, name))
    for o, t_ in zip(ours, theirs, strict=True):
        assert_same(o, t_)
