"""Differential tests of internals.nn against torch.nn.

Models are built twice, with the same structure; internals' copy gets torch's initial weights
through ``load_state_dict``, so these tests do not depend on the random streams (which
``test_random.py`` and ``test_layers.py`` compare). Then names, shapes, reprs, state dicts,
forward values, losses, gradients and whole training steps must match torch's.
"""
import math
import warnings
from collections import OrderedDict

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

# Float32 tolerance for values that go through matmul: internals' and torch's (MKL) kernels sum
# in different orders, and internals composes nll_loss/addmm from several operators.
TOL = dict(rtol=1e-5, atol=1e-6)


def mlp(nn, sizes=(4, 8, 3)):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def twin(build, seed=0, device="cpu"):
    """``build(nn)`` for torch (seeded) and internals, with torch's weights copied into internals'."""
    torch.manual_seed(seed)
    theirs = build(torch.nn)
    ours = build(internals.nn)
    ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
    return ours.to(device), theirs


def randn(*shape, seed=1, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def nested(nn):
    """A module with a parameter of its own, children, a buffer and a non-persistent buffer."""
    lib = torch_like(nn)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(3))
            self.body = mlp(nn)
            self.head = nn.Linear(3, 2, bias=False)
            self.register_buffer("running", lib.zeros(2))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)

        def forward(self, x):
            return self.head(self.body(x) * self.scale) + self.running
    return Net()


def torch_like(nn):
    return torch if nn is torch.nn else internals


# =============================================================================================
# Parameter
# =============================================================================================

def test_parameter_repr_and_flags():
    data = randn(2, 3)
    ours, theirs = internals.nn.Parameter(internals.from_torch(data)), torch.nn.Parameter(data)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours, internals.Tensor) and ours.requires_grad and ours.is_leaf
    frozen = internals.nn.Parameter(internals.from_torch(data), requires_grad=False)
    assert repr(frozen) == repr(torch.nn.Parameter(data, requires_grad=False))


def test_parameter_shares_storage_and_ops_return_plain_tensors():
    data = internals.zeros(2, 3)
    p = internals.nn.Parameter(data)
    assert p.data_ptr() == data.data_ptr()
    data.fill_(2.0)
    assert p.sum().item() == 12.0
    for derived in (p.data, p.detach(), p[0], p.t(), p * 2):
        assert type(derived) is internals.Tensor
    assert type(torch.nn.Parameter(torch.zeros(2)).data) is torch.Tensor


# =============================================================================================
# Structure: registration, traversal, repr, state_dict
# =============================================================================================

def test_structure_matches_torch():
    ours, theirs = twin(nested)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters(prefix="model", recurse=True)] == \
           [n for n, _ in theirs.named_parameters(prefix="model")]
    def own_names(m):
        return [n for n, _ in m.named_parameters(recurse=False)]
    assert own_names(ours) == own_names(theirs)
    assert repr(ours) == repr(theirs)
    for (name, o), t in zip(ours.state_dict().items(), theirs.state_dict().values()):
        assert_same(o, t)
        assert not o.requires_grad, name


def test_repr_matches_torch():
    for build in (lambda nn: mlp(nn, (4, 8, 8, 2)), lambda nn: nn.Linear(3, 2, bias=False),
                  lambda nn: nn.ReLU(inplace=True), lambda nn: nn.CrossEntropyLoss(), lambda nn: nn.MSELoss(),
                  lambda nn: nn.Sequential(nn.Sequential(nn.Linear(1, 1)), nn.ReLU()),
                  lambda nn: nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act=nn.ReLU()))):
        ours, theirs = twin(build)
        assert repr(ours) == repr(theirs)


def test_sequential_indexing():
    ours, theirs = twin(lambda nn: mlp(nn, (4, 8, 8, 2)))
    assert len(ours) == len(theirs) == 5
    assert repr(ours[0]) == repr(theirs[0]) and repr(ours[-1]) == repr(theirs[-1])
    assert repr(ours[1:3]) == repr(theirs[1:3])
    assert ours[-5] is ours[0]
    _, err = assert_same_error(lambda: ours[5], lambda: theirs[5])
    assert str(_) == str(err)


def test_setattr_moves_between_registries():
    for nn in (torch.nn, internals.nn):
        m = nn.Linear(2, 2)
        m.extra = nn.ReLU()
        assert "extra" in m._modules
        m.extra = nn.Parameter(torch_like(nn).zeros(1))
        assert "extra" in m._parameters and "extra" not in m._modules
        m.bias = None
        assert m.bias is None and "bias" in m._parameters
        del m.extra
        assert "extra" not in m._parameters


def test_attribute_errors_match_torch():
    ours, theirs = twin(lambda nn: nn.Linear(2, 2))
    cases = [
        (lambda m, t: m.missing, None),
        (lambda m, t: setattr(m, "weight", t.zeros(2)), None),
        (lambda m, t: m.register_parameter("a.b", None), None),
        (lambda m, t: m.register_buffer("weight", t.zeros(1)), None),
        (lambda m, t: m.add_module("x", 3), None),
    ]
    for fn, _ in cases:
        err_ours, err_theirs = assert_same_error(lambda fn=fn: fn(ours, internals), lambda fn=fn: fn(theirs, torch))
        assert str(err_ours) == str(err_theirs)


def test_train_eval_propagate():
    ours, theirs = twin(nested)
    for mode in ("eval", "train"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]


# =============================================================================================
# load_state_dict
# =============================================================================================

def test_load_state_dict_copies_in_place():
    ours, theirs = twin(lambda nn: mlp(nn))
    weight = ours[0].weight
    result = ours.load_state_dict({k: internals.from_torch(v * 2) for k, v in theirs.state_dict().items()})
    assert repr(result) == repr(theirs.load_state_dict({k: v * 2 for k, v in theirs.state_dict().items()}))
    assert ours[0].weight is weight and weight.requires_grad and weight.is_leaf
    assert_same(ours[0].weight, theirs[0].weight)


@pytest.mark.parametrize("edit", [
    lambda sd: sd.pop("2.bias"),
    lambda sd: sd.update(extra=sd["0.bias"]),
    lambda sd: (sd.pop("0.weight"), sd.update({"2.extra": sd["0.bias"], "9.x": sd["0.bias"]})),
    lambda sd: sd.update({"0.weight": sd["0.weight"][:, :2]}),
], ids=["missing", "unexpected", "both", "size-mismatch"])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors_match_torch(edit, strict):
    ours, theirs = twin(lambda nn: mlp(nn))
    sd_theirs = OrderedDict((k, v.clone()) for k, v in theirs.state_dict().items())
    edit(sd_theirs)
    sd_ours = OrderedDict((k, internals.from_torch(v)) for k, v in sd_theirs.items())
    try:
        expected = theirs.load_state_dict(sd_theirs, strict=strict)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours_err:
            ours.load_state_dict(sd_ours, strict=strict)
        assert str(ours_err.value) == str(e)
    else:
        got = ours.load_state_dict(sd_ours, strict=strict)
        assert (got.missing_keys, got.unexpected_keys) == (expected.missing_keys, expected.unexpected_keys)
        assert repr(got) == repr(expected)


# =============================================================================================
# Forward values, init, losses
# =============================================================================================

def test_forward_values_match_torch():
    ours, theirs = twin(nested)
    x = randn(5, 4)
    assert_same(ours(internals.from_torch(x)), theirs(x), **TOL)
    lin_ours, lin_theirs = twin(lambda nn: nn.Linear(4, 3))
    for shape in [(4,), (2, 3, 4)]:      # 1-d input, and batched over two leading dims
        x = randn(*shape)
        assert_same(lin_ours(internals.from_torch(x)), lin_theirs(x), exact_layout=False, **TOL)


def test_linear_init_bounds():
    """internals' values differ from torch's (other generator); torch's bounds hold: ±1/sqrt(fan_in)."""
    internals.manual_seed(0)
    lin = internals.nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)
    for p in (lin.weight, lin.bias):
        values = p.detach().to_torch()
        assert values.abs().max().item() <= bound
        assert values.max().item() > 0.8 * bound and values.min().item() < -0.8 * bound
    internals.manual_seed(0)
    again = internals.nn.Linear(50, 40)
    assert_same(again.weight.detach(), lin.weight.detach().to_torch())


@pytest.mark.parametrize("args", [("linear",), ("relu",), ("tanh",), ("sigmoid",), ("leaky_relu",),
                                  ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5))])
def test_calculate_gain_matches_torch(args):
    assert internals.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_init_errors_match_torch():
    for fn in (lambda t, nn: nn.init.kaiming_uniform_(t.zeros(3)),
               lambda t, nn: nn.init.kaiming_uniform_(t.zeros(3, 3), mode="fan"),
               lambda t, nn: nn.init.calculate_gain("softsign2")):
        err_ours, err_theirs = assert_same_error(lambda fn=fn: fn(internals, internals.nn),
                                                 lambda fn=fn: fn(torch, torch.nn))
        assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(reduction):
    a, b = randn(4, 3, seed=1), randn(4, 3, seed=2)
    ours = internals.nn.MSELoss(reduction=reduction)(internals.from_torch(a), internals.from_torch(b))
    assert_same(ours, torch.nn.MSELoss(reduction=reduction)(a, b), **TOL)


CE_CASES = {
    "plain": dict(target=[0, 2, 1, 2, 0]),
    "ignore_index": dict(target=[0, -100, 1, 2, -100]),
    "custom_ignore": dict(target=[0, 1, 1, 2, 0], ignore_index=1),
    "weight": dict(target=[0, 2, 1, 2, 0], weight=[0.2, 1.0, 3.0]),
    "weight_and_ignore": dict(target=[0, -100, 1, 2, 2], weight=[0.2, 1.0, 3.0]),
    "all_ignored": dict(target=[-100] * 5),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CE_CASES, ids=list(CE_CASES))
def test_cross_entropy_matches_torch(case, reduction):
    spec = dict(CE_CASES[case])
    logits, target = randn(5, 3) * 3, torch.tensor(spec.pop("target"))
    if "weight" in spec:
        spec["weight"] = torch.tensor(spec["weight"])
    ours_spec = {k: internals.from_torch(v) if isinstance(v, torch.Tensor) else v for k, v in spec.items()}
    theirs = torch.nn.CrossEntropyLoss(reduction=reduction, **spec)(logits, target)
    ours = internals.nn.CrossEntropyLoss(reduction=reduction, **ours_spec)(internals.from_torch(logits),
                                                                           internals.from_torch(target))
    assert_same(ours, theirs, **TOL)


def test_cross_entropy_unbatched_and_functional():
    logits, target = randn(4), torch.tensor(2)
    assert_same(internals.nn.functional.cross_entropy(internals.from_torch(logits), internals.from_torch(target)),
                torch.nn.functional.cross_entropy(logits, target), **TOL)
    x = randn(3, 5)
    assert_same(internals.nn.functional.log_softmax(internals.from_torch(x), dim=1),
                torch.nn.functional.log_softmax(x, dim=1), **TOL)


@pytest.mark.parametrize("call", [
    lambda F, t, x: F.cross_entropy(x, t.tensor([0, 3, 1])),
    lambda F, t, x: F.cross_entropy(x, t.tensor([0, -1, 1])),
    lambda F, t, x: F.cross_entropy(x, t.tensor([0, 1])),
    lambda F, t, x: F.cross_entropy(x, t.tensor([0.0, 1.0, 1.0])),
    lambda F, t, x: F.cross_entropy(x, t.tensor([0, 1, 1]), reduction="avg"),
    lambda F, t, x: F.mse_loss(x, x, reduction="avg"),
], ids=["target-too-large", "target-negative", "batch-mismatch", "float-target", "ce-reduction", "mse-reduction"])
def test_loss_errors_match_torch(call):
    x = randn(3, 3)
    err_ours, err_theirs = assert_same_error(
        lambda: call(internals.nn.functional, internals, internals.from_torch(x)),
        lambda: call(torch.nn.functional, torch, x))
    assert str(err_ours) == str(err_theirs)


def test_mse_broadcast_warns_like_torch():
    a, b = randn(3, 4), randn(4)
    with pytest.warns(UserWarning, match="Using a target size") as ours:
        internals.nn.functional.mse_loss(internals.from_torch(a), internals.from_torch(b))
    with pytest.warns(UserWarning) as theirs:
        torch.nn.functional.mse_loss(a, b)
    assert str(ours[0].message) == str(theirs[0].message)


# =============================================================================================
# Gradients and training
# =============================================================================================

def assert_grads_same(ours, theirs, **tol):
    for (name, o), t in zip(ours.named_parameters(), theirs.parameters()):
        assert (o.grad is None) == (t.grad is None), name
        if t.grad is not None:
            assert_same(o.grad, t.grad, **tol)


@pytest.mark.parametrize("loss_name", ["MSELoss", "CrossEntropyLoss"])
def test_backward_gradients_match_torch(loss_name):
    ours, theirs = twin(nested)
    x = randn(6, 4)
    target = torch.tensor([0, 1, 1, 0, 1, 0]) if loss_name == "CrossEntropyLoss" else randn(6, 2, seed=5)
    getattr(internals.nn, loss_name)()(ours(internals.from_torch(x)), internals.from_torch(target)).backward()
    getattr(torch.nn, loss_name)()(theirs(x), target).backward()
    assert_grads_same(ours, theirs, **TOL)


def test_zero_grad_matches_torch():
    ours, theirs = twin(lambda nn: mlp(nn))
    for set_to_none in (False, True):
        x = randn(2, 4)
        ours(internals.from_torch(x)).sum().backward()
        theirs(x).sum().backward()
        ours.zero_grad(set_to_none=set_to_none)
        theirs.zero_grad(set_to_none=set_to_none)
        assert_grads_same(ours, theirs)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_training_steps_match_torch(optimizer):
    """forward, loss.backward(), step(), zero_grad(): parameters equal torch's after every step."""
    ours, theirs = twin(lambda nn: mlp(nn, (2, 16, 16, 3)))
    kwargs = dict(lr=0.05, momentum=0.9) if optimizer == "SGD" else dict(lr=0.01)
    opt_ours = getattr(internals.optim, optimizer)(ours.parameters(), **kwargs)
    opt_theirs = getattr(torch.optim, optimizer)(theirs.parameters(), foreach=False, **kwargs)
    g = torch.Generator().manual_seed(7)
    for _ in range(10):
        x, y = torch.randn(8, 2, generator=g), torch.randint(0, 3, (8,), generator=g)
        loss_ours = internals.nn.functional.cross_entropy(ours(internals.from_torch(x)), internals.from_torch(y))
        loss_theirs = torch.nn.functional.cross_entropy(theirs(x), y)
        assert_same(loss_ours, loss_theirs, **TOL)
        loss_ours.backward()
        loss_theirs.backward()
        assert_grads_same(ours, theirs, **TOL)
        opt_ours.step()
        opt_theirs.step()
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        for o, t in zip(ours.parameters(), theirs.parameters()):
            assert_same(o, t, **TOL)
            assert o.grad is None and o.is_leaf and o.requires_grad


def test_to_cuda_keeps_parameters_and_trains():
    """``to("cuda")`` swaps each parameter's data in place: same objects, so an optimizer made
    before the move still updates the model. On the simulator here; compared with torch's CPU."""
    ours, theirs = twin(lambda nn: mlp(nn, (2, 4, 3)))
    before = list(ours.parameters())
    opt = internals.optim.SGD(ours.parameters(), lr=0.1)
    assert ours.to("cuda") is ours
    assert all(a is b and a.device.type == "cuda" and type(a) is internals.nn.Parameter
               for a, b in zip(ours.parameters(), before))
    opt_theirs = torch.optim.SGD(theirs.parameters(), lr=0.1, foreach=False)
    x, y = randn(3, 2), torch.tensor([0, 2, 1])
    loss = internals.nn.functional.cross_entropy(ours(internals.from_torch(x).cuda()), internals.from_torch(y).cuda())
    loss.backward()
    torch.nn.functional.cross_entropy(theirs(x), y).backward()
    opt.step()
    opt_theirs.step()
    for o, t in zip(ours.parameters(), theirs.parameters()):
        assert_same(o, t, **TOL)
    ours.cpu()
    assert all(p.device.type == "cpu" for p in ours.parameters())


# =============================================================================================
# Hooks
# =============================================================================================

def test_forward_hooks_match_torch():
    """A pre-hook that replaces the input, a hook that replaces the output, then removal."""
    models = dict(zip(("ours", "theirs"), twin(lambda nn: mlp(nn))))
    calls, outputs = {}, {}
    for name, model in models.items():
        log = calls[name] = []
        pre = model[0].register_forward_pre_hook(lambda m, args, log=log: (log.append(("pre", type(m).__name__)),
                                                                            args[0] * 0)[1])
        post = model[2].register_forward_hook(lambda m, args, out, log=log: (log.append(("post", tuple(args[0].shape))),
                                                                             out + 1)[1])
        x = torch.ones(2, 4)
        x = internals.from_torch(x) if name == "ours" else x
        hooked = model(x)
        pre.remove()
        post.remove()
        pre.remove()                  # a second remove does nothing
        outputs[name] = (hooked, model(x))
    assert calls["ours"] == calls["theirs"] == [("pre", "Linear"), ("post", (2, 8))]
    for o, t in zip(outputs["ours"], outputs["theirs"]):
        assert_same(o, t, **TOL)


def test_missing_forward_error_matches_torch():
    err_ours, err_theirs = assert_same_error(lambda: internals.nn.Module()(1), lambda: torch.nn.Module()(1))
    assert str(err_ours).replace("_forward_unimplemented", "forward") == str(err_theirs)


def _lookup(lib, method, target):
    """``method`` ("get_submodule", "get_parameter", "get_buffer") on a nested model: the found
    object's kind and shape, or the error's class and message."""
    torch.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Sequential(lib.nn.Linear(4, 2)))
    try:
        found = getattr(model, method)(target)
    except AttributeError as error:
        return "AttributeError", str(error)
    return type(found).__name__, list(getattr(found, "shape", []))


@pytest.mark.parametrize("method", ["get_submodule", "get_parameter", "get_buffer"])
@pytest.mark.parametrize("target", ["", "1", "2.0", "9", "0.weight", "2.0.bias", "1.running_mean", "1.nope", "2.x.y"])
def test_lookup_by_dotted_name_matches_torch(method, target):
    assert _lookup(internals, method, target) == _lookup(torch, method, target)


@pytest.mark.parametrize("convert", ["half", "bfloat16"])
def test_half_and_bfloat16_convert_floating_state_as_torch(convert):
    """Floating parameters and buffers change dtype; BatchNorm's int64 counter stays."""
    dtypes = []
    for lib in (internals, torch):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        dtypes.append([str(v.dtype).split(".")[-1] for v in getattr(model, convert)().state_dict().values()])
    assert dtypes[0] == dtypes[1]


def _message(lib, program):
    """The message of the error or warning ``program(lib)`` raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            program(lib)
        except Exception as error:            # noqa: BLE001 - the message is compared
            return type(error).__name__, str(error)
    raise AssertionError("nothing raised")


class _Doubled:
    """A parametrization that changes its tensor's shape."""
    @staticmethod
    def forward(x):
        return x.repeat(2, 1)


SIZE_MESSAGES = {
    "mse_loss": lambda L: L.nn.functional.mse_loss(L.ones(3, 1), L.ones(1, 4)),
    "binary_cross_entropy": lambda L: L.nn.functional.binary_cross_entropy(L.ones(3) / 2, L.ones(4) / 2),
    "binary_cross_entropy_with_logits": lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.ones(3),
                                                                                                  L.ones(4)),
    "load_state_dict": lambda L: L.nn.Linear(2, 3).load_state_dict({"weight": L.zeros(3, 3), "bias": L.zeros(3)}),
    "conv module": lambda L: L.nn.Conv2d(1, 1, 1)(L.ones(2, 2)),
    "attention key and value": lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 1, 4), L.ones(3, 1, 4),
                                                                       L.ones(2, 1, 4)),
    "attention 2d mask": lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 1, 4), L.ones(3, 1, 4), L.ones(3, 1, 4),
                                                                 attn_mask=L.zeros(2, 3)),
    "parametrization": lambda L: L.nn.utils.parametrize.register_parametrization(
        L.nn.Linear(2, 2), "weight", type("Doubled", (L.nn.Module, _Doubled), {})()),
    "embedding_bag weights": lambda L: L.nn.functional.embedding_bag(L.tensor([[0, 1]]), L.ones(3, 2),
                                                                     per_sample_weights=L.ones(2, 2),
                                                                     mode="sum"),
    "muon": lambda L: L.optim.Muon([L.ones(3, requires_grad=True)]),
    "batch_norm of one value": lambda L: L.nn.BatchNorm1d(3)(L.ones(1, 3)),
    "rnn dtype": lambda L: L.nn.RNN(2, 3)(L.ones(1, 1, 2, dtype=L.float64)),
    "module to an integer dtype": lambda L: L.nn.Linear(2, 2).to(L.int64),
    "parametrization dtype": lambda L: L.nn.utils.parametrize.register_parametrization(
        L.nn.Linear(2, 2), "weight", type("Doubled", (L.nn.Module,), {"forward": lambda self, x: x.double()})()),
}


@pytest.mark.parametrize("program", SIZE_MESSAGES.values(), ids=SIZE_MESSAGES.keys())
def test_messages_print_sizes_and_dtypes_as_torchs(program):
    """A size or dtype in a message or warning reads ``torch.Size([...])`` or ``torch.float64``, as
    torch's do (the package's own Size and dtypes print as ``internals.Size``, ``internals.float64``)."""
    assert _message(internals, program) == _message(torch, program)
