"""Exercises for chapter 8 (the codebase tour).

The core exercise, ``check_register_operator(register_operator)``: the reader's
``register_operator(native_functions, derivatives, kernels)`` adds an operator from two YAML
snippets (``native_functions.yaml`` and ``derivatives.yaml`` entries) as the package's
``internals.codegen.operator_from_yaml.register_operator`` does, and returns a handle whose
``undo()`` takes every registration back. The checker registers operators torch has and the
package lacks (``ldexp``, ``dist`` with its default ``p``, ``special_entr`` with an out=
overload, ``special_logit`` with an optional ``eps``), compares values, grad_fn names and
gradients with torch on broadcast and empty shapes, and tries a schema that is defined already,
undo twice, and three registrations from three threads at once; after each case the dispatch
table must be the one before.

A build-it exercise: an operator added through a library.

``check_axpy_operator(register)``: ``register(library_module)`` must define, in a fresh
namespace it is given, ``axpy(Tensor x, Tensor y, Scalar alpha) -> Tensor`` computing
``alpha * x + y``, with a kernel for the ``CPU`` key, and return the ``Library`` object. The
checker registers it with ``torch.library`` and with ``internals.library``, calls both
operators on generated broadcastable shapes and values of ``alpha``, compares the results, and
destroys both libraries again.
"""
import math
import threading

import internals
from internals.aten import dispatcher

from ..display import wrap
from ._runner import run_generated

__all__ = ["check_axpy_operator", "check_register_operator", "dispatch_table"]


def check_axpy_operator(register):
    """Check ``register(library_module) -> Library`` (``axpy`` in namespace ``exercise_axpy``)."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    from hypothesis.extra.numpy import mutually_broadcastable_shapes  # hypothesis is heavy: only a checker needs it


    made = {lib: register(lib.library) for lib in (torch, internals)}
    try:
        cases = st.tuples(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
                          st.sampled_from([0, 1, -2, 0.5]), st.integers(0, 99))

        def check_one(case):
            (shapes, _), alpha, seed = case
            g = torch.Generator().manual_seed(seed)
            x, y = (torch.randn(s, generator=g) for s in shapes)
            theirs = torch.ops.exercise_axpy.axpy(x, y, alpha)
            ours = internals.ops.exercise_axpy.axpy(internals.from_torch(x), internals.from_torch(y), alpha)
            assert torch.allclose(theirs, alpha * x + y), "torch's axpy (your kernel) is not alpha * x + y"
            assert tuple(ours.shape) == tuple(theirs.shape), f"shape {tuple(ours.shape)}, torch's {tuple(theirs.shape)}"
            assert torch.allclose(ours.to_torch(), theirs), f"yours {ours.tolist()}, torch's {theirs.tolist()}"
        return run_generated("check_axpy_operator", cases, check_one)
    finally:
        for library in made.values():
            library._destroy()


# ---------------------------------------------------------------- core exercise: an operator from YAML
# Operators torch has and the package lacks, each as the two snippets a reader's register_operator
# gets, with its kernels (the package's operators, called below autograd) and torch's function.
LDEXP = ("""
- func: ldexp.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: ldexp
""", """
- name: ldexp.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * 2.0 ** other
  other: grad * result * 0.6931471805599453
""")
DIST = ("""
- func: dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
  dispatch:
    CPU: dist
""", """
- name: dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
  self: linalg_vector_norm_backward(grad, self - other, p, result, None, False)
  other: -linalg_vector_norm_backward(grad, self - other, p, result, None, False)
""")
ENTR = ("""
- func: special_entr(Tensor self) -> Tensor
  dispatch:
    CPU: special_entr
- func: special_entr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: special_entr_out
""", """
- name: special_entr(Tensor self) -> Tensor
  self: grad * (-(1 + self.log()))
""")
LOGIT = ("""
- func: special_logit(Tensor self, float? eps=None) -> Tensor
  dispatch:
    CPU: special_logit
""", """
- name: special_logit(Tensor self, float? eps=None) -> Tensor
  self: logit_backward(grad, self, eps)
""")
CLASH = ("""
- func: special_entr(Tensor self) -> Tensor
  dispatch:
    CPU: special_entr
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: special_entr
""", ENTR[1])


def _entr(self):
    """-x log x, 0 at 0, -inf below (torch's special_entr)."""
    return internals.where(self > 0, -self * self.log(), internals.where(self == 0, 0.0, -math.inf))


KERNELS = {
    "ldexp": lambda self, other: self * 2.0 ** other,
    "dist": lambda self, other, p: internals.linalg.vector_norm(self - other, p),
    "special_entr": _entr,
    "special_entr_out": lambda self, *, out: out.copy_(_entr(self)),
    "special_logit": lambda self, eps: self.logit(eps),
}


def dispatch_table():
    """{operator: (schema, {key: kernel})} and the aten names: what a registration changes."""
    ops = {name: (str(op.schema) if op.schema is not None else None, dict(op.kernels))
           for name, op in dispatcher.operators.items()}
    return ops, dict(dispatcher.aten_ops)


def _table_difference(before, after):
    added = sorted(set(after[0]) - set(before[0]))
    removed = sorted(set(before[0]) - set(after[0]))
    changed = [f"{n} keys {sorted(before[0][n][1])} -> {sorted(after[0][n][1])}" for n in before[0]
               if n in after[0] and before[0][n] != after[0][n]]
    names = sorted(set(after[1]) ^ set(before[1]))
    parts = [f"{what}: {items}" for what, items in (("left behind", added), ("removed", removed),
                                                     ("changed", changed), ("aten names differ", names)) if items]
    return "; ".join(parts)


def _put_back(before):
    """Whatever the reader's code left, the dispatcher as it was (so one wrong answer cannot
    break the next case, or the rest of the notebook)."""
    ops = {name: dispatcher.operators[name] for name in before[0] if name in dispatcher.operators}
    for name in list(dispatcher.operators):
        if name not in before[0]:
            del dispatcher.operators[name]
    for name, (_, kernels) in before[0].items():
        op = ops.get(name)
        if op is not None and op.kernels != kernels:
            op.kernels = dict(kernels)
            op.update_table()
    dispatcher.aten_ops.clear()
    dispatcher.aten_ops.update(before[1])


def _same_tensor(what, ours, theirs):
    """AssertionError (torch's answer beside the reader's) unless shape, dtype and values agree."""
    import torch  # torch is heavy: only a check needs it
    if ours is None or theirs is None:
        assert ours is None and theirs is None, f"{what}: torch's {theirs}, yours {ours}"
        return
    ours_t = ours.detach().to_torch()
    same = (tuple(ours_t.shape) == tuple(theirs.shape) and ours_t.dtype == theirs.dtype
            and torch.allclose(ours_t, theirs.detach(), rtol=1e-5, atol=1e-6, equal_nan=True))
    assert same, (f"{what}:\n    torch's {theirs.detach().tolist()} ({theirs.dtype}, shape {tuple(theirs.shape)})"
                  f"\n    yours   {ours_t.tolist()} ({ours_t.dtype}, shape {tuple(ours_t.shape)})")


def _inputs(shapes, seed, low=None):
    """Seeded torch tensors (in [low, low + 0.9) when ``low`` is given) and internals copies,
    all requiring grad."""
    import torch  # torch is heavy: only a check needs it
    g = torch.Generator().manual_seed(seed)
    theirs = [torch.randn(s, generator=g) if low is None else torch.rand(s, generator=g) * 0.9 + low
              for s in shapes]
    ours = [internals.from_torch(t).requires_grad_() for t in theirs]
    return ours, [t.requires_grad_() for t in theirs]


def _op(qualified):
    """``internals.ops.aten.<name>.<overload>``, or an AssertionError saying it is not there."""
    packet, overload = qualified.split(".")
    try:
        return getattr(getattr(internals.ops.aten, packet), overload)
    except AttributeError:
        raise AssertionError(f"internals.ops.aten.{qualified} is not there after your register_operator "
                             f"(torch has torch.ops.aten.{qualified})") from None


def _check_call(qualified, torch_fn, shapes, extra=(), node=None, low=None):
    """Call the operator on tensors of ``shapes`` that require grad, and torch's function: the
    results, the grad_fn's name (torch's, or ``node`` where torch names a composite's) and the
    gradients after ``sum().backward()`` must agree."""
    ours_in, theirs_in = _inputs(shapes, len(shapes) + sum(map(len, shapes)), low)
    theirs = torch_fn(*theirs_in, *extra)
    op = _op(qualified)
    try:
        ours = op(*ours_in, *extra)
    except Exception as e:      # noqa: BLE001 - the reader's error is reported beside torch's answer
        raise AssertionError(f"the call:\n    torch's {theirs.tolist()}\n    yours   raised {type(e).__name__}: {e}") \
            from None
    _same_tensor("the result", ours, theirs)
    want = node or theirs.grad_fn.name()
    got = ours.grad_fn.name() if ours.grad_fn is not None else "no grad_fn (nothing recorded for backward)"
    source = "torch's" if node is None else "torch's rule for a derivatives.yaml entry:"
    assert got == want, f"the result's grad_fn:\n    {source} {want}\n    yours   {got}"
    ours.sum().backward()
    theirs.sum().backward()
    for i, (o, t) in enumerate(zip(ours_in, theirs_in)):
        _same_tensor(f"the gradient of argument {i}", o.grad, t.grad)


def _call_case(snippets, qualified, torch_fn, shapes, extra=(), node=None, low=None):
    def case(register):
        handle = register(*snippets, KERNELS)
        _check_call(qualified, torch_fn, shapes, extra, node, low)
        handle.undo()
    args = ", ".join([f"a tensor of shape {s}" for s in shapes] + [repr(e) for e in extra])
    return f"internals.ops.aten.{qualified}({args}), registered, called and undone", case


def _out_case(register):
    import torch  # torch is heavy: only a check needs it
    handle = register(*ENTR, KERNELS)
    t = torch.rand(5) * 2 - 0.5
    out = internals.empty(5)
    returned = _op("special_entr.out")(internals.from_torch(t), out=out)
    assert returned is out, f"special_entr.out returned {returned!r}: torch's out= overloads return out itself"
    _same_tensor("out", out, torch.special.entr(t))
    try:
        torch.special.entr(t.requires_grad_(), out=torch.empty(5))
    except RuntimeError as e:
        theirs = e
    try:
        _op("special_entr.out")(internals.from_torch(t.detach()).requires_grad_(), out=out)
        ours = "no error"
    except RuntimeError:
        ours = None
    assert ours is None, (f"out= with an input that requires grad:\n    torch's RuntimeError: {theirs}"
                          f"\n    yours   {ours}")
    handle.undo()


def _clash_case(register):
    """A snippet whose second schema (mul.Tensor) is defined already: RuntimeError, and nothing
    of the first (special_entr) stays behind."""
    try:
        handle = register(*CLASH, KERNELS)
    except RuntimeError:
        handle = None
    except Exception as e:      # noqa: BLE001 - the wrong class is the reader's answer, reported
        raise AssertionError(f"torch raises RuntimeError for a schema defined twice; yours raised "
                             f"{type(e).__name__}: {e}") from None
    if handle is not None:
        handle.undo()
        raise AssertionError("mul.Tensor is defined already: torch raises RuntimeError ('Tried to register "
                             "an operator ... multiple times'); yours registered the snippet")
    x = internals.ones(2, requires_grad=True)
    y = x * 2
    name = y.grad_fn.name() if y.grad_fn is not None else None
    assert name == "MulBackward0" and y.tolist() == [2.0, 2.0], f"x * 2 afterwards: torch's [2.0, 2.0] with " \
        f"MulBackward0, yours {y.tolist()} with {name}"


def _undo_twice_case(register):
    """undo(), register again, the first undo() again: the second registration must survive it."""
    import torch  # torch is heavy: only a check needs it
    first = register(*LDEXP, KERNELS)
    first.undo()
    second = register(*LDEXP, KERNELS)
    first.undo()
    try:
        _check_call("ldexp.Tensor", torch.ldexp, [(3,), (3,)])
    except AssertionError as e:
        raise AssertionError(f"the first registration's second undo() removed the second registration: {e}") from None
    second.undo()
    second.undo()


def _threads_case(register):
    """Three operators registered at once from three threads, each then called from the main one."""
    import torch  # torch is heavy: only a check needs it
    work = [(LDEXP, ("ldexp.Tensor", torch.ldexp, [(2, 3), (3,)])),
            (DIST, ("dist.default", torch.dist, [(2, 3), (3,)])),
            (ENTR, ("special_entr.default", torch.special.entr, [(4,)], (), None, 0.05))]
    start, handles, errors = threading.Barrier(len(work)), [None] * len(work), []

    def run(i):
        start.wait()
        try:
            handles[i] = register(*work[i][0], KERNELS)
        except Exception as e:      # noqa: BLE001 - reported from the main thread
            errors.append(f"{type(e).__name__}: {e}")
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"registering from three threads at once raised {errors[0]}"
    for _, call in work:
        _check_call(*call)
    for handle in handles:
        handle.undo()


def _register_cases():
    """Smallest first: the first case a reader's function fails is the one worth reading."""
    import torch  # torch is heavy: only a check needs it
    ldexp = [_call_case(LDEXP, "ldexp.Tensor", torch.ldexp, shapes)
             for shapes in ([(3,), (3,)], [(), (3,)], [(2, 3), (3,)], [(2, 1), (1, 3)], [(0, 3), (3,)])]
    dist = [_call_case(DIST, "dist.default", torch.dist, [(3,), (3,)]),
            _call_case(DIST, "dist.default", torch.dist, [(2, 3), (3,)], (3,)),
            _call_case(DIST, "dist.default", torch.dist, [(2, 1), (3,)])]
    # torch's special_logit is a composite that runs logit (LogitBackward0); a derivatives.yaml
    # entry of its own makes a node named by torch's rule.
    logit = [_call_case(LOGIT, "special_logit.default", torch.special.logit, [(4,)], extra,
                        "SpecialLogitBackward0", 0.05) for extra in ((), (0.25,))]
    entr = [_call_case(ENTR, "special_entr.default", torch.special.entr, [(2, 3)], low=0.05),
            ("internals.ops.aten.special_entr.out(x, out=out), and with x requiring grad", _out_case)]
    rest = [("a snippet defining special_entr and mul.Tensor, which exists", _clash_case),
            ("register, undo(), register again, the first undo() again, the second undo() twice", _undo_twice_case),
            ("ldexp, dist and special_entr registered from three threads at once", _threads_case)]
    return ldexp + dist + logit + entr + rest


def check_register_operator(register_operator):
    """Check ``register_operator(native_functions_yaml, derivatives_yaml, kernels) -> handle`` (with
    ``handle.undo()``): each case registers an operator torch has and the package lacks, calls it
    beside torch (values, grad_fn, gradients), undoes it, and compares the dispatch table with the
    one before."""
    cases = _register_cases()
    for label, case in cases:
        before, made = dispatch_table(), []

        def register(*args, made=made):
            made.append(register_operator(*args))
            return made[-1]
        try:
            case(register)
            difference = _table_difference(before, dispatch_table())
            assert not difference, f"after undo(), the dispatcher's table is not the one before: {difference}"
            failure = None
        except AssertionError as e:
            failure = str(e)
        except Exception as e:      # noqa: BLE001 - the reader's code raised: reported as a wrong answer
            failure = (f"your code raised {type(e).__name__}: {e}\n  (torch's build registers these entries, and "
                       "the operator runs)")
        finally:
            _put_back(before)
        if failure is not None:
            print(wrap(f"check_register_operator: wrong on the smallest failing input found, {label}:\n  {failure}"))
            return False
    print(f"check_register_operator: right on all {len(cases)} cases")
    return True
