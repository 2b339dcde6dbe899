"""Every frontend entry goes through the dispatcher: a logging ``TorchDispatchMode`` sees the same
operators, in the same order, in both libraries, for a corpus of everyday programs."""
import pytest
import torch
from helpers import logging_modes

import internals


def _programs(lib):
    """name -> (setup, program): setup builds the inputs outside the mode, the program runs inside."""
    def ones(*shape, grad=False):
        return lambda: lib.ones(*shape, requires_grad=grad)

    def signed(grad=False):
        return lambda: (lib.arange(6.0).reshape(2, 3) - 2).requires_grad_(grad)

    def linear(*shape, bias=True):
        def setup():
            lib.manual_seed(0)
            return lib.nn.Linear(3, 4, bias=bias), lib.ones(*shape)
        return setup

    return {
        "select": (ones(3, 4), lambda x: x[0]),
        "slice": (ones(5, 4), lambda x: x[1:3]),
        "unsqueeze by None": (ones(3, 4), lambda x: x[None]),
        "select then expand": (ones(3, 4), lambda x: x[0].expand(2, 4)),
        "to float64": (ones(3), lambda x: x.to(lib.float64)),
        "double": (ones(3), lambda x: x.double()),
        "float of float64": (lambda: lib.ones(3, dtype=lib.float64), lambda x: x.float()),
        "to same dtype": (ones(3), lambda x: x.to(lib.float32)),
        "in-place add and mul": (ones(3), lambda x: x.add_(1).mul_(2)),
        "views": (ones(2, 3), lambda x: x.t().transpose(0, 1).view(6).reshape(3, 2)),
        "reductions": (ones(2, 3), lambda x: (x.sum(), x.sum(0), x.mean(1), x.amax(0))),
        "elementwise": (ones(2, 3), lambda x: (x + 1) * x - x.exp()),
        "linear": (linear(2, 3), lambda args: args[0](args[1])),
        "linear, 3-d input": (linear(2, 5, 3), lambda args: args[0](args[1])),
        "linear, 1-d input": (linear(3), lambda args: args[0](args[1])),
        "linear, non-contiguous 3-d input": (lambda: (lib.nn.Linear(3, 4), lib.ones(2, 3, 5).transpose(1, 2)),
                                             lambda args: args[0](args[1])),
        "matmul 3-d by matrix": (ones(2, 5, 3), lambda x: x @ lib.ones(3, 4)),
        "matmul 3-d by a matrix that requires grad": (ones(2, 5, 3), lambda x: x @ lib.ones(3, 4, requires_grad=True)),
        "matmul batched": (ones(2, 5, 3), lambda x: x @ lib.ones(2, 3, 4)),
        "matmul vector by batch": (ones(3), lambda x: x @ lib.ones(2, 3, 4)),
        "reshape that copies": (ones(3, 4), lambda x: x.t().reshape(12)),
        "einsum matmul": (ones(2, 3), lambda x: lib.einsum("ij,jk->ik", x, lib.ones(3, 4))),
        "einsum output transposed": (ones(2, 3), lambda x: lib.einsum("ab,bc->ca", x, lib.ones(3, 4))),
        "einsum trace": (ones(3, 3), lambda x: lib.einsum("ii", x)),
        "einsum bilinear": (ones(2, 3), lambda x: lib.einsum("bn,anm,bm->ba", x, lib.ones(4, 3, 5), lib.ones(2, 5))),
        "linear without bias": (linear(2, 3, bias=False), lambda args: args[0](args[1])),
        "linear backward": (linear(2, 3), lambda args: args[0](args[1]).sum().backward()),
        "exp and sigmoid with grad": (ones(2, 3, grad=True), lambda x: x.exp().sigmoid()),
        "detach": (ones(2, 3, grad=True), lambda x: (x * 2).detach()),
        "relu with grad": (ones(2, 3, grad=True), lambda x: lib.nn.ReLU()(x)),
        "relu backward": (ones(2, 3, grad=True), lambda x: lib.nn.ReLU()(x * 2).sum().backward()),
        "to float64 with grad": (ones(3, grad=True), lambda x: x.double()),
        "slice with grad": (ones(5, 4, grad=True), lambda x: x[1:4:2, None][0]),
        "clip by numbers and by tensors": (ones(2, 3), lambda x: (x.clip(0, 1), x.clip(x), lib.clip(x, max=x),
                                                                  x.clip_(None, x))),
        "index by a tensor": (ones(4, 3), lambda x: x[lib.tensor([2, 0])]),
        "split by sizes and by a size": (ones(1, 3, grad=True), lambda x: (x.split([1, 2], dim=1), lib.split(x, 2, 1),
                                                                         x.split_with_sizes([2, 1], 1))),
        "squeeze one dim, some dims, all dims": (ones(1, 3, grad=True), lambda x: (x.squeeze(0), lib.squeeze(x, 0),
                                                                                 x.squeeze(dim=(0,)), x.squeeze())),
        "narrow": (ones(4, 3, grad=True), lambda x: (x.narrow(0, 1, 2), lib.narrow(x, 1, 0, 3))),
        "flatten, unflatten, movedim, chunk": (ones(2, 3, 4, grad=True), lambda x: (
            x.flatten(), x.flatten(1), x.mT.flatten(), x.unflatten(2, (2, 2)), x.movedim(0, 2), x.chunk(2, 2),
            lib.ones(0, 2).chunk(3))),
        "layers made and run": (ones(2, 4), lambda x: (lib.nn.Linear(4, 3)(x), lib.nn.LayerNorm(4)(x),
                                                        lib.nn.Conv2d(1, 2, (1, 3))(x[None, None]),
                                                        lib.nn.Embedding(5, 2)(lib.tensor([1, 2])))),
        "layer norm with grad saves its statistics as they are": (ones(2, 4, grad=True),
                                                                  lambda x: lib.nn.LayerNorm(4)(x).sum().backward()),
        "conv2d of an unbatched image": (ones(2, 5, 5), lambda x: lib.nn.functional.conv2d(x, lib.ones(3, 2, 3, 3))),
        "item": (ones(1), lambda x: x.item()),
        "float, int, bool and complex of a tensor": (ones(1), lambda x: (float(x), int(x), bool(x), complex(x))),
        "a loss printed with a format": (ones(3, grad=True), lambda x: f"{(x * 2).sum():.3f}"),
        "a comparison in an if": (ones(2), lambda x: 1 if x.sum() > 0 else 2),
        "an index tensor": (lambda: lib.tensor(1), lambda i: [1, 2, 3][i]),
        "item of a cuda tensor": (lambda: lib.ones(2).cuda() if lib is internals else lib.ones(2),
                                  lambda x: x[1].item()),
        # A leaf's gradient is stored through new_empty_strided (AccumulateGrad's clone_obey_contract).
        "a leaf's gradient stored in its layout": (ones(2, 3, grad=True), lambda x: (x.t().sum() + x.sum()).backward()),
        "where with numbers": (ones(3), lambda x: (lib.where(x > 0, x, 0.0), lib.where(x > 0, 1, 2.5),
                                                   lib.where(x > 0, 2, x), x.where(x > 0, 2),
                                                   lib.where(x > 0, lib.ones(3, dtype=lib.int64), 2.5))),
        "where with a number, backward": (ones(3, grad=True), lambda x: lib.where(x > 0, x, 0.0).sum().backward()),
        "reflected operators": (ones(3), lambda x: (2 / x, 2 - x, 2 ** x, 2 // x, 2 % x, 2 * x, 2 + x)),
        "reflected division, backward": (ones(3, grad=True), lambda x: (2 / x).sum().backward()),
        "shifts": (lambda: lib.arange(4), lambda i: (i << 1, i >> 1, i << i, i >> i, 1 << i, i & 3, i | 3, i ^ 3)),
        "shifts in place": (lambda: lib.arange(4), lambda i: i.__ilshift__(1).__irshift__(1)),
        "batch norm reserves a workspace": (lambda: lib.ones(2, 3, 4, requires_grad=True), lambda x: (
            lib.nn.functional.batch_norm(x, lib.zeros(3), lib.ones(3), training=True).sum().backward(),
            lib.nn.functional.batch_norm(x, lib.zeros(3), lib.ones(3)))),
        "batch norm of an empty batch": (lambda: lib.ones(0, 3, 2), lambda x: lib.nn.functional.batch_norm(
            x, lib.zeros(3), lib.ones(3), lib.ones(3), lib.ones(3), training=True)),
        "cross entropy, backward": (ones(3, 4, grad=True), lambda x: lib.nn.functional.cross_entropy(
            x, lib.tensor([1, 0, 3])).backward()),
        "nll loss, each reduction": (ones(3, 4, grad=True), lambda x: [lib.nn.functional.nll_loss(
            x, lib.tensor([1, -100, 3]), reduction=r).sum().backward() for r in ("mean", "sum", "none")]),
        "mse loss, broadcast target, backward": (ones(3, 4, grad=True), lambda x: lib.nn.functional.mse_loss(
            x, lib.zeros(4)).backward()),
        "backward of products and quotients by numbers": (ones(2, 3, grad=True), lambda x: (
            x * 2 + x / 2 + x ** 2 + x ** 3 + x.sqrt() + x.mean(1, keepdim=True) + x.mean() + x.var() + x.std()
            + x.var(1, keepdim=True) + x.std(0)).sum().backward()),
        "backward of softmax, log_softmax and a quotient": (ones(2, 3, grad=True), lambda x: (
            x.softmax(1) + x.log_softmax(0) + x / (x + 1)).sum().backward()),
        "backward of sigmoid and tanh": (ones(2, 3, grad=True), lambda x: (x.sigmoid() + x.tanh()).sum().backward()),
        "backward of select, slice, index, gather and stack": (ones(3, 4, grad=True), lambda x: (
            x[0].sum() + x[:, 1:3].sum() + x[::2].sum() + x[[0, 1]].sum() + x[x > 0].sum()
            + x.gather(1, lib.tensor([[0], [1], [2]])).sum() + lib.stack([x, x]).sum()).backward()),
        "in-place view operators": (ones(2, 3), lambda x: x.t_().unsqueeze_(0).squeeze_().transpose_(0, 1)
                                    .as_strided_((2, 2), (1, 2))),
        "squeeze_ of a view, each overload": (ones(1, 3), lambda x: (x[None].squeeze_(0), x[None].squeeze_((0, 1)),
                                                                     x[None].squeeze_())),
        "in-place view operators, backward": (ones(2, 3, grad=True), lambda x: (x * 2).t_().unsqueeze_(1)
                                              .sum().backward()),
        "backward of a linear layer without bias": (ones(2, 3, grad=True), lambda x: lib.nn.functional.linear(
            x, lib.ones(4, 3, requires_grad=True)).sum().backward()),
        # backward formulas on torch's road: the helpers call the operators torch's call
        "abs backward calls sgn": (signed(grad=True), lambda x: x.abs().sum().backward()),
        "clamp backward, number and tensor bounds": (signed(grad=True), lambda x: (
            x.clamp(-0.5, 0.5).sum() + x.clamp(min=0).sum() + x.clamp(max=0).sum()
            + x.clamp(lib.zeros(3), lib.ones(3)).sum()).backward()),
        "max, min and amax backward": (signed(grad=True), lambda x: (
            x.max() + x.max(1).values.sum() + x.min(0, keepdim=True)[0].sum() + x.amax(1).sum()
            + x.amin((0, 1)) + x.topk(2, 1).values.sum() + x.sort(0)[0][0].sum()).backward()),
        "norm backward": (signed(grad=True), lambda x: (
            x.norm() + x.norm(dim=1).sum() + x.norm(p=1) + x.norm(p=3, dim=0, keepdim=True).sum()).backward()),
        "prod backward, with and without a zero": (signed(grad=True), lambda x: (
            x.prod() + (x + 5).prod() + x.prod(1).sum() + (x + 5).prod(0, keepdim=True).sum()).backward()),
        "cumsum backward flips": (signed(grad=True), lambda x: x.cumsum(1).sum().backward()),
        "matrix by vector backward calls ger": (signed(grad=True), lambda x: (x @ lib.ones(3)).sum().backward()),
        "vector products call dot and squeeze_": (lambda: lib.arange(3.0), lambda v: (
            v @ v, v @ lib.ones(4, 3).t(), (v.requires_grad_() @ lib.ones(3, 2)).sum().backward())),
        "index_select backward calls index_add": (signed(grad=True), lambda x: x.index_select(
            1, lib.tensor([0, 2, 2])).sum().backward()),
        "index_add and its backward": (signed(grad=True), lambda x: lib.zeros(3, 3).index_add(
            0, lib.tensor([0, 0]), x, alpha=2).sum().backward()),
        "activation backward operators": (signed(grad=True), lambda x: (
            lib.nn.functional.gelu(x).sum() + lib.nn.functional.gelu(x, approximate="tanh").sum()
            + lib.nn.functional.silu(x).sum() + lib.nn.functional.softplus(x, 2, 1).sum()).backward()),
        "binary cross entropy with logits, each reduction": (signed(grad=True), lambda x: [
            lib.nn.functional.binary_cross_entropy_with_logits(x, lib.ones(2, 3) / 3, reduction=r).sum().backward()
            for r in ("mean", "sum", "none")]),
        "binary cross entropy with logits, weights": (signed(grad=True), lambda x: (
            lib.nn.functional.binary_cross_entropy_with_logits(x, lib.ones(2, 3) / 3, lib.ones(3) * 2,
                                                               pos_weight=lib.ones(3) * 3).backward())),
        "maximum and minimum backward": (signed(grad=True), lambda x: (
            lib.maximum(x, x.flip(0)) + lib.minimum(x, lib.zeros(3))).sum().backward()),
        "repeat and split backward": (signed(grad=True), lambda x: (
            x.repeat(2, 1, 2).sum() + sum(p.sum() for p in x.split([1, 2], 1)) + x.split(1, 0)[1].sum()).backward()),
        "diagonal and diag backward": (signed(grad=True), lambda x: (
            x.diagonal().sum() + lib.diag(x, 1).sum() + lib.diag(x[0]).sum()).backward()),
        # forward operators that log what torch's log
        ".data and view(dtype) detach through the mode": (signed(grad=True), lambda x: (
            x.data, (x * 2).data, x.view(lib.int32), x.detach().view(lib.float32))),
        "isclose, each dtype and option": (signed(), lambda x: [
            (lib.isclose(x.to(dt), x.to(dt).flip(0)), lib.isclose(x.to(dt), x.to(dt), equal_nan=True),
             lib.isclose(x.to(dt), x.to(dt), rtol=0, atol=0), x.to(dt).isclose(x.to(dt), rtol=0.1))
            for dt in (lib.bool, lib.int64, lib.float32)]),
        "diag calls diagonal_copy": (signed(), lambda x: (lib.diag(x), lib.diag(x, -1), lib.diag(x[0]))),
        "logical operators": (signed(), lambda x: (
            lib.logical_and(x, x > 0), x.logical_or(x > 0), lib.logical_xor(x, x), lib.logical_not(x),
            x.clone().logical_and_(x > 0), x.clone().logical_not_())),
        "cross entropy with label smoothing and with probabilities": (signed(grad=True), lambda x: [
            lib.nn.functional.cross_entropy(x, target, weight, reduction=r, label_smoothing=s).sum().backward()
            for target in (lib.tensor([2, -100]), lib.ones(2, 3) / 3) for weight in (None, lib.ones(3) * 2)
            for r in ("mean", "sum", "none") for s in (0.0, 0.1)]),
        "pow backward, each overload": (signed(grad=True), lambda x: (
            x.pow(x.detach() + 3) + (x + 3).pow(x) + 2 ** x + 0 ** x + x ** 2.5 + x ** 0).sum().backward()),
        "numpy and from_numpy": (signed(), lambda x: (lib.from_numpy(x.numpy()), x.tolist(), repr(x))),
        "in-place writes through views, backward (CopySlices, fill_)": (signed(grad=True), lambda x: [
            step(x * 1) for step in (lambda z: (z.__setitem__(0, 0.0), z.sum().backward()),
                                     lambda z: (z[0].mul_(2), z.sum().backward()),
                                     lambda z: (z[:, 1].zero_(), z.sum().backward()))]),
        "in-place view operators on views keep their own nodes": (signed(grad=True), lambda x: [
            (view_(x * 2), type(view_(x * 2).grad_fn).__name__) for view_ in (
                lambda y: y[1:].t_(), lambda y: y[0].unsqueeze_(0), lambda y: y[:, 1:].transpose_(0, 1),
                lambda y: y[:1].squeeze_(0))]),
    }


@pytest.mark.filterwarnings("ignore:Using a target size")      # mse_loss's broadcast target
@pytest.mark.parametrize("name", list(_programs(torch)))
def test_same_operators_logged(name):
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    setup_t, program_t = _programs(torch)[name]
    setup_i, program_i = _programs(internals)[name]
    args_t, args_i = setup_t(), setup_i()
    with mode_t:
        program_t(args_t)
    with mode_i:
        program_i(args_i)
    assert log_i == log_t


# Training steps with each optimizer: torch's single-tensor loops (its default for CPU
# parameters), their lerp_, addcmul_ and addcdiv_ included, and the ``record_function`` ranges
# ``step`` and ``zero_grad`` run in (enter and exit are operators of the ``profiler`` namespace).
OPTIMIZERS = {
    "SGD": ("SGD", dict(lr=0.1)),
    "SGD, momentum, dampening": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    "SGD, nesterov, weight decay, maximize": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1,
                                                          maximize=True)),
    "Adam": ("Adam", dict()),
    "Adam, weight decay": ("Adam", dict(lr=0.01, weight_decay=0.1)),
    "Adam, amsgrad, maximize": ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05)),
    "Adam, decoupled weight decay": ("Adam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    "AdamW": ("AdamW", dict()),
    "AdamW, amsgrad": ("AdamW", dict(amsgrad=True)),
    "RMSprop": ("RMSprop", dict()),
    "RMSprop, momentum": ("RMSprop", dict(momentum=0.5)),
    "RMSprop, centered, momentum, weight decay, maximize": ("RMSprop", dict(centered=True, momentum=0.9,
                                                                            weight_decay=0.1, maximize=True)),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_training_steps_log_torchs_operators(name):
    cls, config = OPTIMIZERS[name]

    def run(lib, mode, log):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        optimizer = getattr(lib.optim, cls)(model.parameters(), **config)
        x = lib.arange(6.0).reshape(2, 3)
        with mode:
            for _ in range(2):
                optimizer.zero_grad()
                model(x).pow(2).sum().backward()
                optimizer.step()
        return log

    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    run(torch, mode_t, log_t)
    run(internals, mode_i, log_i)
    record_function = [op for op in log_t if op.startswith("profiler.")]
    assert record_function == ["profiler._record_function_enter_new.default",
                               "profiler._record_function_exit._RecordFunction"] * 4     # 2 zero_grad, 2 step
    assert log_i == log_t


@pytest.mark.parametrize("convert", [lambda x: x.double(), lambda x: x[1:3], lambda x: x[0], lambda x: x[:, None][::2]])
def test_dispatched_conversions_and_indexing_record_torchs_nodes(convert):
    """``_to_copy``, ``slice.Tensor``, ``select.int`` and ``unsqueeze`` carry torch's grad_fn and gradient."""
    t = torch.arange(12.0).reshape(4, 3).requires_grad_()
    o = internals.from_torch(t.detach()).requires_grad_()
    rt, ro = convert(t), convert(o)
    assert type(ro.grad_fn).__name__ == type(rt.grad_fn).__name__
    assert (ro.shape, ro.stride(), ro.storage_offset()) == (rt.shape, rt.stride(), rt.storage_offset())
    (rt * rt).sum().backward()
    (ro * ro).sum().backward()
    torch.testing.assert_close(o.grad.to_torch(), t.grad)


# x[...] and x[...] = v as torch's python_variable_indexing.cpp runs them: a slice that keeps its
# whole dim is skipped (except alone, x[:]), an index that selects everything is an alias, index
# tensors make no slices, a bool makes its index with empty + fill_, a number value is lifted
# first, a value's leading ones are viewed away only where the sizes differ.
INDEXING = ["x[...]", "x[()]", "x[None]", "x[..., None]", "x[0:10, -3:]", "x[0:4:1, 0]", "x[:, 0:2]", "x[:]",
            "x[:, :]", "x[0:4]", "x[tensor([2, 0])]", "x[tensor([2, 0]), 1:]", "x[:, tensor([2, 0])]",
            "x[..., tensor([1])]", "x[tensor([True, False, True, True])]", "x[None, tensor([1])]",
            "x[0, tensor([1])]", "x[[0, 1]]", "x[True]", "x[False]", "x[None, True]", "x[0, [0, 1]]", "x[[0, 1], 0]",
            "x[0:4, tensor([1])]", "x[[True, False, True, True]]", "x[[[0, 1], [1, 2]]]",
            "x[:] = 1", "x[:, 0] = 1", "x[0:4, 0:3] = y", "x[...] = y", "x[:, :] = y", "x[tensor([0])] = 1",
            "x[:, tensor([0])] = 1", "x[0] = 1", "x[0:2] = 1", "x[1:, :] = 2", "x[:, tensor([0])] = y[:, :1]",
            "x[True] = 1", "x[False] = 5", "x[0] = w", "x[1:3] = w", "x[tensor([0, 1])] = w", "x[0] = 1.5",
            "x[0, 0] = tensor(3.)", "x[x > 1] = 0", "x[0] = y[0, None]", "x[...] = 1", "x[0] = y[0]",
            "x[:2] = y[:2]", "x[[0, 1]] = y[:2]", "x[0:2] = y[0]", "x[1:, 1:] = tensor([[7.]])", "x[:, None, [1]] = 3",
            "x[0] = 'a'", "x[0] = 2 + 1j", "x[0] = None", "x[:, 5]", "x[0, 0, 0]", "x[..., ...]", "x[..., 0, ...]",
            "x[..., ..., 0]", "x[..., ..., 0:1]", "x[..., ..., None]", "x[..., ..., [0]]", "x[tensor(1)]",
            "x[:, tensor(1)]", "x[tensor(True)]", "x[tensor(False), 0]", "x[tensor(1)] = 2"]


@pytest.mark.parametrize("program", INDEXING)
def test_indexing_logs_and_results(program):
    def run(lib, mode):
        x, log = lib.ones(4, 3), []
        x[1] = 2.0
        env = {"x": x, "y": lib.zeros(4, 3), "w": lib.zeros(1, 1, 3), "tensor": lib.tensor}
        modes = logging_modes(log, log)
        try:
            with modes[mode]:
                result = eval(program, env) if " = " not in program else exec(program, env)
        except Exception as e:      # noqa: BLE001 -- the class and message are what is compared
            return log, (type(e).__name__, str(e))
        shown = None if result is None else (result.tolist(), tuple(result.shape), result.stride(),
                                             result.storage_offset(), result._base is x)
        return log, (x.tolist(), shown)

    assert run(internals, 1) == run(torch, 0)


@pytest.mark.parametrize("program", ["x.t_()", "x.transpose_(0, 1)", "x.unsqueeze_(1)", "x[None].squeeze_()",
                                     "x[None].squeeze_(0)", "x[None].squeeze_((0, 1))",
                                     "x.as_strided_((2, 2), (1, 2), 1)",
                                     "(x * 2).t_()", "(x * 2).unsqueeze_(0)", "(x * 2).as_strided_((3,), (2,))"])
def test_in_place_view_operators(program):
    """``x`` itself takes its view's geometry: the same tensor back, torch's sizes, strides, offset,
    version, grad_fn and gradient."""
    def run(lib):
        leaf = lib.arange(6.0).reshape(2, 3).requires_grad_()
        x = leaf.detach().clone() if "*" not in program else leaf
        out = eval(program, {"x": x})
        geometry = (tuple(out.shape), out.stride(), out.storage_offset(), out._version, out.tolist())
        if not out.requires_grad:
            return geometry
        out.sum().backward()
        return geometry, type(out.grad_fn).__name__, leaf.grad.tolist()

    assert run(internals) == run(torch)


# Backward formulas that call operators torch's call (mul.Scalar, div.Scalar, reciprocal, the
# softmax and loss backward operators), differentiated twice: the nodes of the second graph,
# the values and both gradients are torch's.
GRAD_CASES = {
    "powers, roots and means": lambda lib, x: (x ** 3 + x.sqrt() + x.mean() + x.mean(0) * x.sum(0) + x.var()).sum(),
    "reciprocal and reflected division": lambda lib, x: (x.reciprocal() + 2 / x).sum(),
    "select and slice": lambda lib, x: (x[0] * x[:, 1]).sum() + (x[1:, 0] * x[::2, 2]).sum(),
    "sigmoid and tanh": lambda lib, x: (x.sigmoid() * x + x.tanh() * x).sum(),
    "softmax and log_softmax": lambda lib, x: (x.softmax(1) * x + x.log_softmax(0) * x).sum(),
    "cross entropy": lambda lib, x: lib.nn.functional.cross_entropy(x * x, lib.tensor([1, 0, 2])),
    "nll loss with weights, summed": lambda lib, x: lib.nn.functional.nll_loss(
        x * x, lib.tensor([1, 0, 2]), lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64), reduction="sum"),
    "mse loss": lambda lib, x: lib.nn.functional.mse_loss(x * x, x.detach()),
    # formulas that now take torch's road (sgn, logical_and_, ger, index_add, scatter, the
    # activations' backward operators, diagonal_backward, flip for cumsum, the exclusive products)
    "abs, sgn, clamp and maximum": lambda lib, x: ((x - 0.5).abs() * x + x.sgn() * x + x.clamp(0.3, 0.9) * x
                                                   + x.clamp(min=0.5) * x + lib.maximum(x, 1 - x) * x).sum(),
    "gelu, silu and softplus": lambda lib, x: (lib.nn.functional.gelu(x) * x + lib.nn.functional.silu(x) * x
                                               + lib.nn.functional.gelu(x, approximate="tanh") * x
                                               + lib.nn.functional.softplus(x, 2, 1) * x).sum(),
    # (a target that requires grad with pos_weight calls log_sigmoid, which internals lacks)
    "binary cross entropy with logits": lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(
        x * x, x.detach().sigmoid(), pos_weight=lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
    + lib.nn.functional.binary_cross_entropy_with_logits(x * x, x.sigmoid(), reduction="sum"),
    "index_add, index_select, diag and mv": lambda lib, x: (
        lib.zeros(3, 3, dtype=lib.float64).index_add(0, lib.tensor([0, 0, 2]), x) * x
        + x.index_select(1, lib.tensor([2, 0, 0])) * x).sum() + (lib.diag(x) * x[0]).sum() + (x @ x[1]).sum(),
    "powers with tensor exponents and a number base": lambda lib, x: (x.pow(x) + 2 ** x + x ** 2.5).sum(),
    "max, amax, norm, prod, cumsum and topk": lambda lib, x: (
        x.max() * x + x.max(1).values * x + x.amax(0) * x + x.norm() * x + x.norm(dim=1) * x + x.prod() * x
        + x.prod(1) * x + x.cumsum(1) * x + x.topk(2, 1).values.sum(1, keepdim=True) * x).sum(),
}


def _nodes(t):
    """The names of the nodes reachable from ``t.grad_fn`` (each node visited once)."""
    seen, stack = {}, [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen[id(node)] = node       # kept alive, so no id is reused during the walk
            stack += [n for n, _ in node.next_functions]
    return {node.name() for node in seen.values()}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_backward_operators_twice_differentiated(name):
    def run(lib):
        x = (lib.arange(9, dtype=lib.float64).reshape(3, 3) / 7 + 0.2).requires_grad_()
        out = GRAD_CASES[name](lib, x)
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return _nodes(out) | _nodes(g), out, g, gg

    nodes_t, *values_t = run(torch)
    nodes_i, *values_i = run(internals)
    assert nodes_i == nodes_t
    for ours, theirs in zip(values_i, values_t):
        torch.testing.assert_close(ours.detach().to_torch(), theirs.detach())


def test_detached_handles_made_through_a_mode():
    """``.data`` and ``view(dtype)`` under a mode: the handle comes from the mode's ``aten.detach``;
    ``.data`` then gets a version counter of its own, ``view(dtype)`` keeps its base's."""
    def run(lib, mode):
        x = lib.ones(3, requires_grad=True) * 2
        x.add_(1)
        with mode:
            d, v = x.data, x.view(lib.int32)
        d.add_(1)
        return [(t._version, t._base is None, t.requires_grad, t.grad_fn is None) for t in (x, d, v)], x.tolist()

    mode_t, mode_i = logging_modes([], [])
    assert run(internals, mode_i) == run(torch, mode_t)
