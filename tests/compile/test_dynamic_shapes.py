"""Automatic dynamic shapes, as torch.compile does them (``torch/_dynamo/pgo.py``, ``config.py``'s
``automatic_dynamic_shapes``): the first compile is static; a recompile caused by a size that
changed traces that dim as a symbol, whose graph (guarded ``2 <= x.size()[0]``) serves every later
size but 0 and 1. Each case runs the same calls through torch.compile (the eager backend: its
Dynamo, guards and recompiles, without Inductor) and counts the compiles of both, compares the
recompile reasons with torch's ``guard_failures`` (what ``TORCH_LOGS=recompiles`` prints) and
the values with eager torch."""
import numpy as np
import pytest
import torch
from torch._dynamo.utils import guard_failures

import internals
from internals._dynamo import config


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run_both(make_fn, calls, dynamic=None):
    """Run ``calls`` (lists of numpy arrays) through torch.compile and internals.compile; return
    (torch's compile count, torch's reasons, the CompiledFunction)."""
    torch._dynamo.reset()
    compiles = []

    def backend(gm, example_inputs):
        compiles.append(gm)
        return gm.forward
    theirs_fn = make_fn(torch)
    theirs = torch.compile(theirs_fn, backend=backend, dynamic=dynamic)
    ours = internals.compile(make_fn(internals), dynamic=dynamic)
    for arrays in calls:
        want = theirs(*(torch.from_numpy(a) for a in arrays))
        got = ours(*(internals.tensor(a) for a in arrays))
        assert tuple(got.shape) == tuple(want.shape) and tuple(got.stride()) == tuple(want.stride())
        np.testing.assert_allclose(got.to_torch().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    reasons = [r.split("  #")[0] for r in guard_failures[theirs_fn.__code__]]
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
