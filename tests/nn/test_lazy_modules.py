"""The lazy modules (``nn.LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d``, ``LazyInstanceNorm1d/2d/3d``), ``LazyModuleMixin`` and the
uninitialized parameters and buffers, against torch.

Seeded alike, a lazy module's first call materializes its parameters from the input's shape and
initializes them with torch's draws: the reprs before and after, the class it becomes, its state
dict and its output are torch's (outputs of convolutions and products within ulps, the rest bit
for bit). An uninitialized parameter refuses its shape and any computation with torch's errors;
loading a state dict materializes it.
"""
import pytest
import torch
from helpers import PRODUCT_ULPS, assert_same, assert_within_ulps_of_largest, torch_on_one_thread

import internals

MODULES = {         # constructor, first input's shape
    "LazyLinear": (lambda nn: nn.LazyLinear(3), (2, 5)),
    "LazyLinear_no_bias": (lambda nn: nn.LazyLinear(2, bias=False), (4, 3, 2)),
    "LazyConv1d": (lambda nn: nn.LazyConv1d(4, 2), (2, 3, 6)),
    "LazyConv2d_groups": (lambda nn: nn.LazyConv2d(4, 2, groups=2, bias=False), (1, 4, 5, 5)),
    "LazyConv3d_unbatched": (lambda nn: nn.LazyConv3d(2, 1, padding=1), (2, 2, 2, 2)),
    "LazyConvTranspose1d": (lambda nn: nn.LazyConvTranspose1d(2, 2, stride=2), (3, 4)),
    "LazyConvTranspose2d": (lambda nn: nn.LazyConvTranspose2d(2, 3), (1, 2, 4, 4)),
    "LazyConvTranspose3d": (lambda nn: nn.LazyConvTranspose3d(2, 2, groups=2), (1, 4, 2, 2, 2)),
    "LazyBatchNorm1d": (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda nn: nn.LazyBatchNorm2d(affine=False, momentum=0.3), (2, 3, 2, 2)),
    "LazyBatchNorm3d": (lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), (2, 2, 1, 2, 2)),
    "LazyInstanceNorm1d": (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    "LazyInstanceNorm2d": (lambda nn: nn.LazyInstanceNorm2d(affine=False), (2, 3, 2, 2)),
    "LazyInstanceNorm3d": (lambda nn: nn.LazyInstanceNorm3d(), (1, 2, 2, 2, 2)),
}


def _first_call(lib, name):
    make, shape = MODULES[name]
    lib.manual_seed(0)
    module = make(lib.nn)
    before = (repr(module), type(module).__name__, module.has_uninitialized_params(),
              sorted(name for name, _ in module.named_parameters()))
    x = lib.arange(float(torch.Size(shape).numel())).reshape(shape).sin()
    out = module(x)
    state = module.state_dict()
    after = (repr(module), type(module).__name__, isinstance(module, lib.nn.modules.lazy.LazyModuleMixin),
             [(k, tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in state.items()],
             [type(p).__name__ for p in module.parameters()], hasattr(module, "_initialize_hook"))
    return before, after, [out, *(b for _, b in module.named_buffers())], lib.rand(2), list(module.parameters())


@pytest.mark.parametrize("name", list(MODULES))
def test_first_call_materializes_torchs_parameters(name):
    """The parameters are drawn bit for bit; the output and the running statistics are sums (a
    convolution's, a mean's) whose terms cancel: within ulps of the largest value."""
    with torch_on_one_thread():
        theirs = _first_call(torch, name)
    ours = _first_call(internals, name)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    for mine, their in zip(ours[2], theirs[2]):
        if their.dtype.is_floating_point:
            assert_within_ulps_of_largest(mine, their, PRODUCT_ULPS)
        else:           # num_batches_tracked
            assert_same(mine, their, rtol=0, atol=0)
    assert_same(ours[3], theirs[3], rtol=0, atol=0)           # the same draws were taken
    for mine, their in zip(ours[4], theirs[4]):
        assert_same(mine, their, rtol=0, atol=0)


def test_uninitialized_parameters_refuse_what_torch_refuses():
    def run(lib):
        p = lib.nn.UninitializedParameter()
        b = lib.nn.UninitializedBuffer(dtype=lib.float64)
        log = [repr(p), repr(b), p.requires_grad, b.requires_grad, lib.nn.parameter.is_lazy(p),
               lib.nn.parameter.is_lazy(lib.ones(1)), p.dtype == lib.float32, b.dtype == lib.float64]
        for action in (lambda: p.shape, lambda: p + 1, lambda: lib.nn.LazyLinear(2).weight.shape,
                       lambda: p.share_memory_()):
            try:
                action()
            except Exception as error:      # noqa: BLE001 -- the class and message are compared
                log.append((type(error).__name__, str(error).split(" in <")[0].split(" in aten")[0]))
        p.materialize((2, 3))
        b.materialize((4,), dtype=lib.float32)
        log += [type(p).__name__, tuple(p.shape), p.requires_grad, type(b).__name__, tuple(b.shape),
                str(b.dtype).split(".")[-1]]
        return log
    assert run(internals) == run(torch)


def test_loading_a_state_dict_materializes_a_lazy_module():
    def run(lib):
        lib.manual_seed(1)
        source = lib.nn.Linear(3, 2)
        lazy = lib.nn.LazyLinear(2)
        saved_lazy = sorted(lib.nn.LazyLinear(4).state_dict())
        lazy.load_state_dict(source.state_dict())
        shapes = [tuple(p.shape) for p in lazy.parameters()]
        out = lazy(lib.ones(1, 3))
        return saved_lazy, shapes, type(lazy).__name__, out.detach(), lazy.weight.detach()
    ours, theirs = run(internals), run(torch)
    assert ours[:3] == theirs[:3]
    assert_same(ours[3], theirs[3], ulps=PRODUCT_ULPS)      # a product: its sum's order follows the CPU
    assert_same(ours[4], theirs[4], rtol=0, atol=0)


@pytest.mark.parametrize("program", [
    "lib.nn.LazyConv2d(4, 2, groups=3)(lib.ones(1, 4, 5, 5))",
    "lib.nn.LazyConv2d(4, 2)(lib.ones(5, 5))",
    "lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.LazyLinear(2))",
])
def test_bad_first_calls_raise_torchs_errors(program):
    def run(lib):
        try:
            eval(program, {"lib": lib})
        except Exception as error:      # noqa: BLE001 -- the class and message are compared
            return type(error).__name__, str(error).replace("internals.Size", "torch.Size")
        return None
    assert run(internals) == run(torch)


def test_a_lazy_network_trains_as_torchs():
    """A Sequential of lazy layers, its sizes found by the first batch, then two SGD steps."""
    results = []
    for lib in (torch, internals):
        lib.manual_seed(2)
        net = lib.nn.Sequential(lib.nn.LazyConv1d(3, 2), lib.nn.LazyBatchNorm1d(), lib.nn.ReLU(),
                                lib.nn.Flatten(), lib.nn.LazyLinear(2))
        x = lib.arange(24.0).reshape(2, 3, 4).cos()
        net(x)
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            net(x).pow(2).sum().backward()
            opt.step()
        results.append(([type(m).__name__ for m in net], [p.detach().clone() for p in net.parameters()]))
    assert results[0][0] == results[1][0]
    for theirs, ours in zip(results[0][1], results[1][1]):
        assert_same(internals.tensor(ours.tolist()), torch.tensor(theirs.tolist()), rtol=1e-5, atol=1e-6)
