"""Build-it exercises for chapter 6 (autograd): checkers for backward formulas the reader writes.

The chapter's core exercise has two parts, each a piece the engine runs on:
``check_sum_to(fn)``: ``fn(grad, shape)`` sums a gradient down to an input's shape, undoing a
broadcast (``at::sum_to``, which the engine applies to every gradient whose shape is not its
input's, and ``expand``'s backward calls); compared with torch's ``sum_to_size`` on size-0,
size-1, expanded (stride 0) and transposed gradients of several dtypes.
``check_compute_dependencies(fn)``: ``fn(roots)`` returns, for every node reachable from the root
nodes, how many edges point at it (``compute_dependencies`` in ``engine.cpp``); compared with
the edges of torch's graph of the same program, on programs that use a value twice, reach a node
along two paths, and start backward from several roots, one leading to another.

``check_mul_backward(fn)``: ``fn(grad, self, other)`` returns ``(grad_self, grad_other)`` for
``self * other`` with broadcasting, as ``MulBackward0`` does (``derivatives.yaml``'s
``grad * other`` and ``grad * self``, each summed back to its input's shape). Compared with
``torch.autograd.grad`` on generated broadcastable shapes.

``check_tanh_backward(fn)``: ``fn(grad, result)`` returns the gradient of ``tanh`` from its saved
*output* (torch's ``tanh_backward``). Compared with torch on generated values.
"""
import internals

from ._runner import readers_answer, run_generated

__all__ = ["check_mul_backward", "check_tanh_backward", "check_sum_to", "check_compute_dependencies"]


def _pair(shape_a, shape_b, seed):
    import torch  # torch is heavy: only a check needs it
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape_a, generator=g, dtype=torch.float64),
            torch.randn(shape_b, generator=g, dtype=torch.float64))


def _same(ours, theirs, what):
    import torch  # torch is heavy: only a check needs it
    assert ours is not None, f"{what} is None"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)}, torch's {tuple(theirs.shape)}"
    assert torch.allclose(ours.to_torch(), theirs), f"{what}: yours {ours.tolist()}, torch's {theirs.tolist()}"


def check_mul_backward(fn):
    """Check ``fn(grad, self, other) -> (grad_self, grad_other)`` against torch's gradients of ``self * other``."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    from hypothesis.extra.numpy import mutually_broadcastable_shapes  # hypothesis is heavy: only a checker needs it


    cases = st.tuples(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), st.integers(0, 99))

    def check_one(case):
        (shapes, out_shape), seed = case
        a, b = (t.requires_grad_() for t in _pair(*shapes, seed))
        grad = torch.full(out_shape, 2.0, dtype=torch.float64)
        grad = grad.cumsum(-1) if out_shape else grad
        theirs = torch.autograd.grad(a * b, (a, b), grad)
        ours = fn(*(internals.from_torch(t.detach()) for t in (grad, a, b)))
        _same(ours[0], theirs[0], f"grad_self for shapes {shapes}")
        _same(ours[1], theirs[1], f"grad_other for shapes {shapes}")
    return run_generated("check_mul_backward", cases, check_one)


def check_tanh_backward(fn):
    """Check ``fn(grad, result) -> grad_input`` (``result = tanh(x)``) against torch's gradient."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it


    values = st.lists(st.floats(-6, 6), min_size=1, max_size=6)

    def check_one(xs):
        x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
        y = x.tanh()
        grad = torch.linspace(-1, 1, len(xs), dtype=torch.float64)
        theirs, = torch.autograd.grad(y, x, grad)
        ours = fn(internals.from_torch(grad), internals.from_torch(y.detach()))
        _same(ours, theirs, f"the gradient at x = {xs}")
    return run_generated("check_tanh_backward", values, check_one)


# ------------------------------------------------------------------ the core exercise, part 1: sum_to
def _sum_to_cases():
    """(grad's shape, the input's shape, grad's layout, dtype, seed): the input's shape is grad's
    with leading dims dropped and some dims made 1, as a broadcast input's is."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    @st.composite
    def build(draw):
        shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 3]), max_size=4)))
        kept = shape[draw(st.integers(0, len(shape))):]
        target = tuple(1 if draw(st.booleans()) else n for n in kept)
        layout = draw(st.sampled_from(["contiguous", "expanded", "transposed"]))
        dtype = draw(st.sampled_from(["float64", "float64", "float32", "int64"]))
        return shape, target, layout, dtype, draw(st.integers(0, 99))
    return build()


def _grad_like(shape, layout, dtype, seed):
    """A gradient as backward hands one over: contiguous, expanded (``sum``'s backward gives
    stride 0), or a transposed view."""
    import torch  # torch is heavy: only a check needs it
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, dtype)

    def values(s):
        return torch.randint(-9, 9, s, generator=g).to(dtype)
    if layout == "expanded":
        return values(tuple(1 if i % 2 == 0 else n for i, n in enumerate(shape))).expand(shape)
    if layout == "transposed" and len(shape) >= 2:
        return values(shape[::-1]).permute(*range(len(shape) - 1, -1, -1))
    return values(shape)


def check_sum_to(fn):
    """Check ``fn(grad, shape) -> Tensor`` (``at::sum_to``) against torch's ``grad.sum_to_size(shape)``."""
    import torch  # torch is heavy: only a check needs it

    def check_one(case):
        shape, target, layout, dtype, seed = case
        grad = _grad_like(shape, layout, dtype, seed)
        theirs = grad.sum_to_size(target)
        what = f"sum_to(grad of shape {shape}, {target})"
        ours = readers_answer(fn, internals.from_torch(grad), target,
                              want=f"torch's sum_to_size: shape {tuple(theirs.shape)}, {theirs.tolist()}")
        assert ours is not None, f"{what} returned None"
        assert tuple(ours.shape) == tuple(theirs.shape), (
            f"{what}: shape {tuple(ours.shape)}, torch's {tuple(theirs.shape)}")
        ours_dtype, their_dtype = (str(t.dtype).rpartition(".")[2] for t in (ours, theirs))
        assert ours_dtype == their_dtype, f"{what}: dtype {ours_dtype}, torch's {their_dtype}"
        assert torch.allclose(ours.to_torch(), theirs), f"{what}: yours {ours.tolist()}, torch's {theirs.tolist()}"
    return run_generated("check_sum_to", _sum_to_cases(), check_one, max_examples=150)


# ------------------------------------------------------------------ the core exercise, part 2: dependencies
_BINARY = {"mul": "*", "add": "+"}


def _program_cases():
    """A program over leaves a, b (requiring grad) and c (not): each step applies mul, add or
    sin to earlier values (often the same value twice), and backward starts from 1-3 of them
    (repeats, and roots that lead to other roots, included)."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    @st.composite
    def build(draw):
        steps = []
        for k in range(draw(st.integers(1, 5))):
            n = 3 + k
            op = draw(st.sampled_from(["mul", "mul", "add", "sin"]))
            i = draw(st.integers(0, n - 1))
            j = i if draw(st.booleans()) else draw(st.integers(0, n - 1))
            steps.append((op, i, j))
        roots = draw(st.lists(st.integers(3, 2 + len(steps)), min_size=1, max_size=3))
        return tuple(steps), tuple(roots)
    return build()


def _names(steps):
    return ["a", "b", "c"] + [f"v{k}" for k in range(len(steps))]


def _run_program(lib, steps):
    values = [lib.tensor([0.5, 1.5], requires_grad=True), lib.tensor([2.0, -1.0], requires_grad=True),
              lib.tensor([3.0, 0.25])]
    for op, i, j in steps:
        x, y = values[i], values[j]
        values.append(x.sin() if op == "sin" else x * y if op == "mul" else x + y)
    return values


def _program_text(steps, roots):
    names = _names(steps)
    lines = [f"{names[3 + k]} = " + (f"{names[i]}.sin()" if op == "sin" else f"{names[i]} {_BINARY[op]} {names[j]}")
             for k, (op, i, j) in enumerate(steps)]
    return "; ".join(lines) + f"; backward from [{', '.join(names[r] for r in roots)}]"


def _torch_counts(our_roots, their_roots):
    """Edges into each node of torch's graph of the same program, keyed by the package's node at
    the same place (the two graphs are walked side by side), with each node's label."""
    pairs, seen, counts = list(dict.fromkeys(zip(our_roots, their_roots))), set(their_roots), {}
    ours_of = dict((t, o) for o, t in pairs)
    while pairs:
        ours, theirs = pairs.pop()
        for (o, _), (t, _) in zip(ours.next_functions, theirs.next_functions):
            if t is None:
                continue
            assert o is not None and o.name() == t.name(), f"the graphs differ at {theirs.name()}"
            counts[t] = counts.get(t, 0) + 1
            if t not in seen:
                seen.add(t)
                ours_of[t] = o
                pairs.append((o, t))
    return {ours_of[t]: n for t, n in counts.items()}


def check_compute_dependencies(fn):
    """Check ``fn(roots) -> {node: count}`` against the edges into each node of torch's graph."""
    import torch  # torch is heavy: only a check needs it

    def check_one(case):
        steps, roots = case
        ours, theirs = _run_program(internals, steps), _run_program(torch, steps)
        roots = [r for r in roots if theirs[r].requires_grad]
        if not roots:
            return                              # nothing there needs a gradient: no graph
        truth = _torch_counts([ours[r].grad_fn for r in roots], [theirs[r].grad_fn for r in roots])
        answer = fn([ours[r].grad_fn for r in roots])
        program = _program_text(steps, roots)
        assert isinstance(answer, dict), f"for {program}: you returned {type(answer).__name__}, not a dict"
        answer = {node: n for node, n in answer.items() if n}       # a count of 0 may be left out
        labels = {v.grad_fn: name for name, v in zip(_names(steps), ours) if v.grad_fn is not None}
        for node in dict.fromkeys([*truth, *answer]):
            label = labels.get(node, "")
            label = f" ({label})" if label else " (a leaf's AccumulateGrad)" if node.name() == "AccumulateGrad" else ""
            assert answer.get(node, 0) == truth.get(node, 0), (
                f"for {program}: {node.name()}{label}: you counted {answer.get(node, 0)}, torch's graph has "
                f"{truth.get(node, 0)} edges into it")
    return run_generated("check_compute_dependencies", _program_cases(), check_one, max_examples=100)
