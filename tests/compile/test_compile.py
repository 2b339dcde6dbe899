"""internals.compile: fused Numba kernels give torch's values; guards decide when to recompile."""
import numpy as np
import pytest
import torch

import internals


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return internals.tensor(a), torch.tensor(a)


def chain(T):
    return lambda x, bias: x * T.sigmoid(1.702 * x) + bias


def softmax(T):
    return lambda x: T.softmax(x, -1)


def layer_norm(T):
    def f(x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / T.sqrt(var + 1e-5)
    return f


def mse(T):
    return lambda x, bias: ((x - bias) ** 2).mean()


def mlp(T):
    return lambda x, w: T.relu(x @ w) * 2.0 - 1.0


CASES = {"chain": (chain, [(64, 33), (33,)]), "softmax": (softmax, [(16, 50)]),
         "layer_norm": (layer_norm, [(16, 50)]), "mse": (mse, [(64, 33), (33,)]),
         "mlp": (mlp, [(8, 5), (5, 7)])}


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_values_match_torch(name):
    make, shapes = CASES[name]
    pairs = [_pair(*s, seed=i) for i, s in enumerate(shapes)]
    compiled = internals.compile(make(internals))
    got = compiled(*[p[0] for p in pairs])
    want = make(torch)(*[p[1] for p in pairs])
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.kernels, "nothing was fused"


def test_chain_is_one_kernel_reading_each_input_once():
    compiled = internals.compile(chain(internals))
    compiled(*[_pair(*s)[0] for s in [(64, 33), (33,)]])
    (kernel,) = compiled.kernels
    text = str(kernel)
    # rows in parallel, the last dim inside: the bias, broadcast along rows, is read at c
    assert "@njit(parallel=True" in text and "for r in prange(64):" in text and "for c in range(33):" in text
    assert text.count("in0[") == 1 and text.count("in1[") == 1 and text.count("out0[") == 1
    assert "x1 = in1[c]" in text and "exp_f32(" in text


def test_softmax_and_layer_norm_are_one_row_kernel_each():
    for make in (softmax, layer_norm):
        compiled = internals.compile(make(internals))
        compiled(_pair(16, 50)[0])
        assert len(compiled.kernels) == 1 and "for r in prange(16):" in str(compiled.kernels[0])


def test_softmax_computes_each_exponential_once():
    """The sum's loop parks exp(x - max) in the output; the last loop divides it in place."""
    compiled = internals.compile(softmax(internals))
    compiled(_pair(16, 50)[0])
    text = str(compiled.kernels[0])
    assert text.count("exp_f32(") == 1
    assert "v_exp = out0[r * 50 + c]" in text
    assert "inv_sum_1 = ONE / v_sum_1" in text and "v_exp * inv_sum_1" in text   # one division per row


def test_non_contiguous_input_follows_eager_layout():
    x, tx = _pair(33, 64)
    bias, tbias = _pair(33, seed=1)
    compiled = internals.compile(chain(internals))
    got = compiled(x.t(), bias)
    want = chain(torch)(tx.t(), tbias)
    assert got.stride() == want.stride()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_guards_recompile_on_shape_stride_dtype_and_requires_grad():
    compiled = internals.compile(chain(internals))
    x, bias = _pair(8, 4)[0], _pair(4, seed=1)[0]
    compiled(x, bias)
    compiled(x * 2, bias)                       # same guards: the cached kernel
    assert compiled.recompiles == 1
    compiled(_pair(9, 4)[0], bias)              # a new shape
    assert compiled.recompiles == 2
    compiled(x.t().contiguous().t(), bias)     # same shape, other strides
    assert compiled.recompiles == 3
    compiled(x.double(), bias.double())         # another dtype
    assert compiled.recompiles == 4
    xg = x.detach().requires_grad_()
    out = compiled(xg, bias)                    # requires_grad: compiled forward and backward
    assert compiled.recompiles == 5 and type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    out.sum().backward()
    assert xg.grad.shape == x.shape
    compiled(x, bias)
    assert compiled.recompiles == 5


def test_cuda_kernel_on_small_tensors():
    if not internals.cuda.is_available():
        pytest.skip("no CUDA (real or simulated)")
    x, tx = _pair(6, 5)
    bias, tbias = _pair(5, seed=1)
    compiled = internals.compile(chain(internals))
    got = compiled(x.cuda(), bias.cuda())
    assert "@cuda.jit" in str(compiled.kernels[0]) and "cuda.grid(1)" in str(compiled.kernels[0])
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), chain(torch)(tx, tbias).numpy(), rtol=1e-5, atol=1e-6)
    sm = internals.compile(softmax(internals))
    np.testing.assert_allclose(sm(x.cuda()).cpu().numpy(), torch.softmax(tx, -1).numpy(), rtol=1e-5, atol=1e-6)
    loss = internals.compile(mse(internals))       # a whole-tensor reduction: eager kernels on CUDA
    got = loss(x.cuda(), bias.cuda())
    assert "prange" not in "".join(map(str, loss.kernels)) and got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), mse(torch)(tx, tbias).numpy(), rtol=1e-5)


def test_exercise_checkers_accept_solutions_and_reject_mistakes():
    from internals._dynamo import guard_key
    from internals.exercises.compile import (
        check_guard_key,
        check_pointwise_groups,
        reference_pointwise_groups,
    )
    assert "correct" in check_pointwise_groups(reference_pointwise_groups)
    assert "6 kinds" in check_guard_key(guard_key)
    with pytest.raises(AssertionError, match="expected groups"):
        check_pointwise_groups(lambda g: [[n.name] for n in g.nodes if n.op == "call_function"])
    with pytest.raises(AssertionError, match="strides"):
        check_guard_key(lambda args: tuple(tuple(a.shape) if hasattr(a, "shape") else a for a in args))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_nan_and_inf_match_torch(dtype):
    """The row max vectorizes as max() plus a nan flag: a nan anywhere in a row still wins."""
    rows = torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), 0.0, 1.0], [-float("inf"), 0.0, 1.0],
                         [3.0, 1.0, 2.0]], dtype=getattr(torch, dtype))
    compiled = internals.compile(softmax(internals))
    got = compiled(internals.from_torch(rows)).to_torch()
    np.testing.assert_allclose(got.numpy(), torch.softmax(rows, -1).numpy(), rtol=1e-6, equal_nan=True)
    text = str(compiled.kernels[0])
    assert ("exp_f32(" in text) == (dtype == "float32") and ("math.exp(" in text) == (dtype == "float64")


_SEEN = []


def _keep_doubled(x):
    _SEEN.append(x * 2)
    return x + 1


def _counting_module(T):
    class Counting(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x.sin()
    return Counting()


def test_a_write_to_python_state_is_made_on_every_call_with_real_values():
    """A list append of a tensor and a module's attribute count, in a function without a break:
    torch.compile makes them once per call with the real tensors. The trace's writes (a fake
    tensor appended, a count one too high) are undone and the function runs eagerly."""
    results = []
    for T in (torch, internals):
        torch._dynamo.reset()
        _SEEN.clear()
        module = _counting_module(T)
        keep, count = T.compile(_keep_doubled, backend="eager"), T.compile(module, backend="eager")
        for v in (1.0, 2.0, 2.0):
            keep(T.full((2,), v))
            count(T.full((2,), v))
        results.append(([t.tolist() for t in _SEEN], module.calls))
    assert results[0] == results[1] == ([[2.0, 2.0], [4.0, 4.0], [4.0, 4.0]], 3)


def _say(x):
    y = x * 2
    print("step", y.shape[0])
    return y + 1


def test_print_prints_on_every_call(capsys):
    """torch.compile breaks the graph at ``print`` and prints on each call, with the values of
    that call (a size that changed too), and so do the graphs compiled around it here."""
    outputs = []
    for T in (torch, internals):
        torch._dynamo.reset()
        compiled = T.compile(_say, backend="eager")
        values = [compiled(T.full((n,), 1.0)).tolist() for n in (2, 3, 3)]
        outputs.append((values, capsys.readouterr().out))
    assert outputs[0] == outputs[1] == ([[3.0] * 2, [3.0] * 3, [3.0] * 3], "step 2\nstep 3\nstep 3\n")


def test_print_held_in_the_module_globals_prints_on_every_call(capsys):
    """A module whose globals hold ``print`` itself (code run by ``exec`` with it in scope): the
    print is the builtin all the same, and prints on each call, as under torch.compile."""
    outputs = []
    for T in (torch, internals):
        torch._dynamo.reset()
        scope = {"print": print}
        exec("def say(x):\n    print('step')\n    return x + 1\n", scope)
        compiled = T.compile(scope["say"], backend="eager")
        values = [compiled(T.full((2,), float(i))).tolist() for i in range(3)]
        outputs.append((values, capsys.readouterr().out))
    assert outputs[0] == outputs[1] == ([[1.0] * 2, [2.0] * 2, [3.0] * 2], "step\n" * 3)


class _Scaler:
    def __init__(self, w):
        self.w = w

    @internals.compile
    def run(self, x):
        return x * self.w


def test_compile_on_a_method_binds_its_instance_and_guards_the_attributes_read():
    """As torch.compile on a method: the instance is bound, its attribute read is guarded (a
    changed ``w`` compiles again, an equal one on another instance reuses the graph)."""
    first, second = _Scaler(2.0), _Scaler(2.0)
    assert first.run(internals.ones(2)).tolist() == [2.0, 2.0]
    assert second.run(internals.ones(2)).tolist() == [2.0, 2.0]
    assert len(_Scaler.run.graphs) == 1
    second.w = 3.0
    assert second.run(internals.ones(2)).tolist() == [3.0, 3.0]
    assert len(_Scaler.run.graphs) == 2 and _Scaler.run.break_reasons == []


def test_a_small_call_runs_the_kernels_build_without_threads_as_inductors_rule_says():
    """Inductor opens a parallel region only when each thread gets ``config.cpp.min_chunk_size``
    elements or more; a generated kernel's call picks its serial or parallel build by that rule."""
    import torch._inductor.config as inductor_config

    from internals._inductor import MIN_CHUNK_SIZE, _one_or_many_threads
    from internals.aten import parallel
    from internals.aten.native.cpu.parallel_for import Twins

    assert inductor_config.cpp.min_chunk_size == MIN_CHUNK_SIZE
    builds = Twins(parallel="parallel", serial="serial")
    threads = internals.get_num_threads()
    small, large = internals.ones(MIN_CHUNK_SIZE * threads - 1), internals.ones(2, MIN_CHUNK_SIZE * threads)
    assert _one_or_many_threads(builds, [small, internals.ones(3)]) == "serial"
    assert _one_or_many_threads(builds, [small, large]) == ("parallel" if threads > 1 else "serial")
    saved = parallel._requested
    internals.set_num_threads(1)
    try:
        assert _one_or_many_threads(builds, [large]) == "serial"
    finally:
        internals.set_num_threads(threads)
        parallel._requested = saved     # as it was: no request made
