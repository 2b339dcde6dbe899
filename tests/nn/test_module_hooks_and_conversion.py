"""Module hooks as torch 2.13 has them (forward pre-hooks and hooks with ``prepend``,
``with_kwargs`` and ``always_call``; the state-dict save and load hooks, public and private) and
``Module.to`` with complex and other dtypes; the global hooks every module runs
(``register_module_forward_hook`` and kin) and ``Module.set_submodule``, against torch: each
scenario logs what the hooks saw and did, in both libraries, and the logs must be equal."""
import warnings
from collections import OrderedDict

import pytest
import torch

import internals


def _model(L):
    class Model(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.bn = L.nn.Linear(2, 2), L.nn.BatchNorm1d(2)

        def forward(self, x, scale=1.0, fail=False):
            if fail:
                raise ValueError("boom")
            return self.bn(self.lin(x)) * scale
    L.manual_seed(0)
    return Model()


def forward_hooks(L, log):
    m = _model(L)
    m.register_forward_pre_hook(lambda mod, a, k: log.append(("pre_kw", len(a), sorted(k))) or (a, {**k, "scale": 2.0}),
                                with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, a: log.append(("pre", len(a))), prepend=True)
    m.register_forward_hook(lambda mod, a, k, o: log.append(("fwd_kw", sorted(k))) or o + 1, with_kwargs=True)
    always = m.register_forward_hook(lambda mod, a, o: log.append(("always", o is None)), always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append(("first",)), prepend=True)
    out = m(L.ones(3, 2), scale=3.0)
    log.append(("out", [round(v, 4) for v in out.sum(1).tolist()]))
    with pytest.raises(ValueError, match="boom"):
        m(L.ones(3, 2), fail=True)
    always.remove()

    def failing(mod, a, k, o):
        raise KeyError("inner")
    m.register_forward_hook(failing, with_kwargs=True, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="boom"):
            m(L.ones(3, 2), fail=True)
    log.append(("warned", [str(w.message)[:70] for w in caught]))


def bad_pre_hook_result(L, log):
    m = L.nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError) as e:
        m(L.ones(1, 2))
    log.append(str(e.value))


def pre_hook_replaces_args(L, log):
    m = L.nn.Linear(2, 1)
    L.nn.init.ones_(m.weight)
    L.nn.init.zeros_(m.bias)
    m.register_forward_pre_hook(lambda mod, a: a[0] * 2)         # a lone value becomes the args tuple
    m.register_forward_hook(lambda mod, a, o: log.append(("args", a[0].tolist())))
    log.append(m(L.ones(1, 2)).tolist())


def state_dict_hooks(L, log):
    m = _model(L)
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
    m.lin.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre_lin", prefix)))

    def post(mod, sd, prefix, meta):
        log.append(("post", prefix, sorted(sd)[:3], meta))
        sd[prefix + "extra"] = L.zeros(1)
    m.register_state_dict_post_hook(post)
    # a private hook's result replaces the dict it was given (the parent keeps its own)
    m.bn._register_state_dict_hook(lambda mod, sd, prefix, meta: OrderedDict(
        (k, v) for k, v in sd.items() if "num_batches" not in k))
    log.append(("keys", list(m.state_dict())))
    with pytest.raises(RuntimeError) as e:
        m._register_state_dict_hook(post)
    log.append(str(e.value))
    other = L.nn.Linear(2, 2)
    other.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError) as e:
        other.state_dict()
    log.append(str(e.value))


def load_state_dict_hooks(L, log):
    source, m = _model(L), _model(L)

    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", type(mod).__name__, prefix, sorted(sd), meta, strict))
        if prefix + "old_w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "old_w")
    m.lin.register_load_state_dict_pre_hook(rename)
    m._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: log.append(("private_pre", prefix, len(rest))))

    def forgive(mod, keys):
        log.append(("post", type(mod).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys.clear()
    m.register_load_state_dict_post_hook(forgive)
    m.bn.register_load_state_dict_post_hook(lambda mod, keys: log.append(("post_bn", list(keys.missing_keys))))
    state = OrderedDict((k.replace("lin.weight", "lin.old_w"), v) for k, v in source.state_dict().items())
    del state["bn.bias"]
    log.append(repr(m.load_state_dict(state)).replace("internals", "torch"))
    log.append(bool((m.lin.weight == source.lin.weight).all()))
    strict = L.nn.Linear(2, 2)
    strict.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError) as e:
        strict.load_state_dict(L.nn.Linear(2, 2).state_dict())
    log.append(str(e.value))


def module_to(L, log):
    m = L.nn.Linear(2, 2)
    m.register_buffer("idx", L.tensor([1, 2]))
    m.register_buffer("c", L.zeros(2, dtype=L.complex128))

    def dtypes():
        return {k: str(v.dtype).replace("internals", "torch") for k, v in m.state_dict().items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.to(L.complex64)
        log.append(([str(w.message)[:60] for w in caught], dtypes(), type(m.weight).__name__, m.weight.requires_grad))
        m.to(L.float64)
        log.append((dtypes(), [str(w.message)[:50] for w in caught][1:]))
    with pytest.raises(TypeError) as e:
        m.to(L.int32)
    log.append(str(e.value).replace("internals", "torch"))
    m.to(L.zeros(1, dtype=L.float16))
    log.append(dtypes())
    m.to("cpu", L.float32, True)
    log.append(dtypes())
    log.append(L.nn.Conv2d(2, 2, 1).to(memory_format=L.channels_last).weight.stride())


def global_hooks(L, log):
    """The global hooks run on every module (the child first finishes its own call), before each
    module's own hooks of their kind; removing their handles stops them."""
    g = L.nn.modules.module
    m = _model(L)
    m.register_forward_pre_hook(lambda mod, a: log.append(("own_pre", type(mod).__name__)))
    m.register_forward_hook(lambda mod, a, o: log.append(("own_fwd", type(mod).__name__)))
    handles = [
        g.register_module_forward_pre_hook(lambda mod, a: log.append(("pre", type(mod).__name__, len(a)))),
        g.register_module_forward_hook(lambda mod, a, k, o: log.append(("fwd_kw", type(mod).__name__, sorted(k))),
                                       with_kwargs=True),
        g.register_module_forward_hook(lambda mod, a, o: o * 2 if isinstance(mod, L.nn.Linear) else None),
        g.register_module_full_backward_pre_hook(lambda mod, go: log.append(("bw_pre", type(mod).__name__))),
        g.register_module_full_backward_hook(
            lambda mod, gi, go: log.append(("bw", type(mod).__name__, [round(v, 4) for v in go[0].sum(1).tolist()]))),
    ]
    try:
        x = L.tensor([[1.0, 2.0], [3.0, -1.0], [0.0, 5.0]], requires_grad=True)
        out = m(x, scale=3.0)
        log.append(("out", [round(v, 4) for v in out.sum(1).tolist()]))
        out.sum().backward()
        log.append(("grad", [round(v, 4) for v in x.grad.sum(1).tolist()]))
    finally:
        for h in handles:
            h.remove()
    m(L.ones(3, 2))
    log.append(("after_remove", len(log)))


def registration_hooks(L, log):
    """The global registration hooks see every parameter, buffer and child a module registers
    (in ``__init__``, ``__setattr__``, ``register_*``, ``add_module``); a result replaces the value."""
    g = L.nn.modules.module
    handles = [
        g.register_module_parameter_registration_hook(lambda mod, n, v: log.append(("param", type(mod).__name__, n))),
        g.register_module_buffer_registration_hook(
            lambda mod, n, v: log.append(("buffer", type(mod).__name__, n, v is None)) or (v if v is None else v + 1)),
        g.register_module_module_registration_hook(
            lambda mod, n, v: L.nn.Tanh() if isinstance(v, L.nn.ReLU) else log.append(("module", n))),
    ]
    try:
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU())
        m.add_module("norm", L.nn.BatchNorm1d(2))
        m.register_buffer("mask", L.zeros(2))
        m.mask = L.ones(2)
        m.register_buffer("empty", None)
        m.extra = L.nn.Parameter(L.ones(1))
        m.norm = None
    finally:
        for h in handles:
            h.remove()
    m.register_buffer("late", L.zeros(1))
    log.append([type(mod).__name__ for mod in m.children()])
    log.append({k: v.tolist() for k, v in m.named_buffers()})


def set_submodule(L, log):
    """Replacing, adding (not with ``strict``) and the errors: no target, not a module, a missing
    parent, an attribute that is not a module."""
    m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Sequential(L.nn.ReLU()))
    m.set_submodule("1.0", L.nn.Tanh())
    m.set_submodule("1.extra", L.nn.Sigmoid())
    m.set_submodule("0", L.nn.Identity(), strict=True)
    log.append([type(mod).__name__ for mod in m.modules()])
    for args in [("", L.nn.ReLU()), ("1.0", 3), ("2.x", L.nn.ReLU()), ("1.new", L.nn.ReLU(), True),
                 ("0.weight", L.nn.ReLU()), ("x.y", L.nn.ReLU())]:
        try:
            m.set_submodule(*args)
            log.append("no error")
        except (ValueError, AttributeError) as e:
            log.append((type(e).__name__, str(e).replace("torch.nn.modules", "internals.nn.modules")
                        .replace("<class 'int'>", "int")))


def hook_handles_as_context_managers(L, log):
    """A hook's handle is a context manager: the hook runs inside the ``with`` block only, for
    module hooks and tensor hooks alike."""
    m = L.nn.Linear(2, 2)
    x = L.ones(1, 2, requires_grad=True)
    with m.register_forward_hook(lambda mod, args, out: log.append("forward")) as handle:
        log.append(type(handle).__name__)
        m(x)
    with x.register_hook(lambda grad: log.append("tensor")):
        m(x).sum().backward()
    m(x).sum().backward()
    log.append("after")


@pytest.mark.parametrize("scenario", [forward_hooks, bad_pre_hook_result, pre_hook_replaces_args, state_dict_hooks,
                                      load_state_dict_hooks, module_to, global_hooks, registration_hooks,
                                      set_submodule, hook_handles_as_context_managers],
                         ids=lambda f: f.__name__)
def test_scenario_logs_match_torch(scenario):
    ours, theirs = [], []
    scenario(internals, ours)
    scenario(torch, theirs)
    assert ours == theirs


def test_buffer_assigned_as_an_attribute_is_registered_as_torchs():
    """``nn.Buffer``: a plain tensor marked so that assigning it to a module registers it, persistent
    or not; the marks are attributes, ``isinstance(t, nn.Buffer)`` reads them."""
    logs = []
    for L in (torch, internals):
        m = L.nn.Linear(2, 2)
        m.kept = L.nn.Buffer(L.ones(2))
        m.scratch = L.nn.Buffer(L.zeros(3), persistent=False)
        plain = L.ones(1)
        marked = L.nn.Buffer(L.ones(2, requires_grad=True))
        m.kept = L.full((2,), 5.0)           # an assignment to a registered buffer's name keeps it one
        logs.append((sorted(dict(m.named_buffers())), sorted(m.state_dict()), m.kept.tolist(),
                     type(marked).__name__, marked.requires_grad, marked.grad_fn is None,
                     isinstance(marked, L.nn.Buffer), isinstance(plain, L.nn.Buffer),
                     isinstance(m.kept, L.nn.Buffer), L.nn.Buffer().shape == (0,)))
    assert logs[0] == logs[1]
