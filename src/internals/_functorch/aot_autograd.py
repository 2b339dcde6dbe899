"""AOTAutograd: compile a differentiable function forward *and* backward (``torch/_functorch/aot_autograd.py``).

A compiled graph that only computes outputs is useless for training: the outputs need a
``grad_fn``, and the backward pass should be compiled as well. AOTAutograd does it in four steps:

1. **metadata**: run the function once on fake tensors, with autograd on, to learn which
   outputs require grad (torch: ``run_functionalized_fw_and_collect_metadata``);
2. **joint graph**: trace ``joint(primals, tangents)``, which runs the function and then
   ``autograd.grad`` of its outputs with the tangents as incoming gradients. The autograd engine
   runs above the tracer, so the backward formulas' operators are recorded after the forward's
   (``create_joint``). Decompositions and functionalization apply to both halves;
3. **partition** the joint graph (``partitioners.default_partition``): a forward graph that
   also returns the saved values, a backward graph that starts from them;
4. **compile** both halves with the package's backend and wrap them in an ``autograd.Function``
   named ``CompiledFunction``, as torch does (``_aot_autograd/runtime_wrappers.py``): its
   forward runs the compiled forward and saves what the backward graph needs; its backward
   runs the compiled backward. The outputs' ``grad_fn`` is ``CompiledFunctionBackward``, and
   the package's own autograd engine calls it like any other node.
"""
import dataclasses

from .. import autograd
from .._decomp import decomposition_table
from .._subclasses.fake_tensor import FakeTensorMode
from .._tensor import Tensor
from ..aten.native.tensor_factories import empty_strided, zeros
from ..autograd.function import Function
from ..c10.grad_mode import GradMode
from ..c10.sym import is_symbolic
from ..fx.experimental.proxy_tensor import ProxyTorchDispatchMode, _dynamic_fake, _example_value, make_fx
from ..fx.experimental.symbolic_shapes import ShapeEnv
from ..fx.passes import functionalize
from ..utils import _python_dispatch
from .partitioners import default_partition

__all__ = ["AOTCompiled", "aot_function", "trace_joint"]


@dataclasses.dataclass
class OutputInfo:
    """What the forward returns (torch's ViewAndMutationMeta, reduced to what is used here)."""

    single: bool                    # a lone tensor, not a tuple
    differentiable: list            # per output: whether it requires grad (gets a tangent)
    metas: list                     # per output: (shape, dtype, device), for the zero gradient of an unused one
    symbolic: list = None           # per output: the dims whose size is a symbol (a trace with dims)


def collect_metadata(fn, args, dims=None):
    """Run ``fn`` on fake twins of ``args`` with autograd on: which outputs require grad. With
    the compiler's ``dims`` (``make_fx``'s ``_dynamic_dims``) the twins' dynamic sizes are
    symbols, so the outputs' dims that are symbols are known (``OutputInfo.symbolic``)."""
    if dims is not None and any(d is not None for d in dims):
        mode = FakeTensorMode(shape_env=ShapeEnv(allow_unbacked=False))
        try:
            with mode:
                return _collect(fn, _symbolic_twins(mode, args, dims))
        except Exception:  # noqa: BLE001 -- a program the symbolic run cannot follow: as without dims
            pass
    mode = FakeTensorMode()
    with mode:
        return _collect(fn, [mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args])


def _collect(fn, fakes):
    with autograd.enable_grad():
        out = fn(*fakes)
    outs = _as_outputs(out)
    return OutputInfo(isinstance(out, Tensor), [o.requires_grad for o in outs],
                      [(tuple(_example_value(n) for n in o.shape), o.dtype, o.device) for o in outs],
                      [{k for k, n in enumerate(o.shape) if is_symbolic(n)} for o in outs])


def _symbolic_twins(mode, args, dims):
    """Fake twins of ``args`` whose dynamic sizes and numbers are symbols, as ``make_fx`` makes
    them for ``_dynamic_dims``."""
    twins = []
    for a, spec in zip(args, dims, strict=True):
        if spec is None:
            twins.append(mode.from_tensor(a) if isinstance(a, Tensor) else a)
        elif isinstance(a, Tensor):
            twins.append(_dynamic_fake(mode, a, *spec))
        elif type(a) is int:
            twins.append(mode.shape_env.create_symbolic_size(a, spec[0], positive=None,
                                                              specialize_zero_one=spec[1] not in ("number", "int")))
        else:
            twins.append(mode.shape_env.create_symbolic_float(a, spec[0]))
    return twins

def _as_outputs(out):
    outs = [out] if isinstance(out, Tensor) else list(out) if isinstance(out, (tuple, list)) else None
    if outs is None or not all(isinstance(o, Tensor) for o in outs):
        raise NotImplementedError(f"AOTAutograd here compiles functions returning tensors, got {type(out).__name__}")
    return outs


def _proxy_mode():
    return next(m for m in reversed(_python_dispatch._stack.modes) if isinstance(m, ProxyTorchDispatchMode))


def _tag(graph, tag):
    for node in graph.nodes:
        node.meta.setdefault("partitioner_tag", tag)


def _tangent_dims(args, dims, info):
    """The compiler's ``_dynamic_dims`` for the tangents: a tangent's dim is a symbol where its
    output's is (torch makes the tangents from the outputs' fakes), which duck shaping makes the
    input's symbol of that size. Without the outputs' symbols (``info.symbolic`` None), a dim of
    an output whose size is a dynamic input's example size is taken for one."""
    sizes = {a.shape[d] for a, spec in zip(args, dims, strict=True) if spec is not None and isinstance(a, Tensor)
             for d in spec[1]}
    symbolic = info.symbolic or [None] * len(info.metas)
    out = []
    for (shape, _, _), d, known in zip(info.metas, info.differentiable, symbolic, strict=True):
        if d:
            chosen = known if known is not None else {k for k, n in enumerate(shape) if n in sizes and n > 1}
            out.append((f"tangents_{len(out) + 1}", chosen) if chosen else None)
    return out


def trace_joint(fn, args, info=None, dims=None, decompositions=decomposition_table):
    """The joint graph of ``fn`` at ``args``, placeholders named ``primals_i`` and ``tangents_i``
    and output ``(*outputs, *grads)``, one gradient per primal (None where it needs none), with
    the nodes traced during the forward tagged ``is_forward``. ``decompositions`` is the table
    the trace applies: the compiler's by default (its backend fuses what remains); torch's
    ``aot_function`` passes the caller's, none unless given. Returns (GraphModule, OutputInfo)."""
    info = info or collect_metadata(fn, args, dims)
    n = len(args)

    def joint(*flat):
        primals, tangents = flat[:n], flat[n:]
        with autograd.enable_grad():
            outs = _as_outputs(fn(*primals))
        _tag(_proxy_mode().graph, "is_forward")       # every node so far ran in the forward
        wanted = [o for o, d in zip(outs, info.differentiable, strict=True) if d]
        wrt = [p for p in primals if _requires_grad(p)]
        grads = autograd.grad(wanted, wrt, list(tangents), allow_unused=True) if wanted and wrt else [None] * len(wrt)
        found = iter(grads)
        return (*outs, *(next(found) if _requires_grad(p) else None for p in primals))

    # The tangents are traced contiguous: at run time the incoming gradients are made so too.
    tangents = [empty_strided(shape, _contiguous(shape), dtype=dtype, device=device)
                for (shape, dtype, device), d in zip(info.metas, info.differentiable, strict=True) if d]
    # as Dynamo hands it over: a value read from data (an ``item()``, a constant's too) is not
    # folded into the graph nor kept as a symbol -- the compiler breaks the graph there
    dynamic = None
    if dims is not None and any(d is not None for d in dims):
        dynamic = [*dims, *_tangent_dims(args, dims, info)]
    gm = make_fx(joint, decompositions, tracing_mode="fake", _fold_constant_reads=False,
                 _dynamic_dims=dynamic)(*args, *tangents)
    _name_placeholders(gm, n)
    _tag(gm.graph, "is_backward")
    _spread_tags(functionalize(gm))
    gm.graph.eliminate_dead_code()          # views functionalization replayed that nobody reads
    gm.recompile()
    return gm, info


def _requires_grad(primal):
    """A primal is a tensor, or a number argument made a symbol (no gradient)."""
    return isinstance(primal, Tensor) and primal.requires_grad


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(size, 1)
    return tuple(strides)


def _name_placeholders(gm, n):
    """``primals_1``... and ``tangents_1``..., the names AOTAutograd gives them."""
    placeholders = [p for p in gm.graph.nodes if p.op == "placeholder"]
    for i, node in enumerate(placeholders):
        node.name = node.target = f"primals_{i + 1}" if i < n else f"tangents_{i - n + 1}"
        gm.graph._names.add(node.name)
    gm.recompile()


def _spread_tags(gm):
    """Functionalization replaced in-place nodes by new, untagged ones at the same place: each
    takes the phase of the nodes before it."""
    phase = "is_forward"
    for node in gm.graph.nodes:
        phase = node.meta.setdefault("partitioner_tag", phase)


class AOTCompiled:
    """``fn`` at the metadata of ``args``, compiled forward and backward. Calling it returns
    outputs whose ``grad_fn`` is ``CompiledFunctionBackward``. ``joint``, ``forward_graph``,
    ``backward_graph`` and ``saved`` (the saved values' names) are kept for reading."""

    def __init__(self, fn, args, compiler, dims=None, bw_compiler=None, decompositions=decomposition_table):
        self.joint, self.info = trace_joint(fn, args, dims=dims, decompositions=decompositions)
        num_outputs = len(self.info.differentiable)
        self.forward_graph, self.backward_graph, self.saved = default_partition(self.joint,
                                                                                num_fwd_outputs=num_outputs)
        self.forward_compiled = compiler(self.forward_graph)
        self.backward_compiled = (bw_compiler or compiler)(self.backward_graph)
        self.function = _compiled_function(self.forward_compiled, self.backward_compiled, self.info)

    @property
    def kernels(self):
        halves = (self.forward_compiled, self.backward_compiled)
        return [k for half in halves for k in getattr(half, "kernels", [])]

    def __call__(self, *args):
        outs = self.function.apply(*args)
        return outs[0] if self.info.single else outs


def _compiled_function(forward_compiled, backward_compiled, info):
    """A new ``autograd.Function`` class per compiled function, as torch makes one per graph."""
    n_out = len(info.differentiable)

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx, *primals):
            results = forward_compiled(*primals)
            outs, saved = results[:n_out], results[n_out:]
            # a dynamic graph's backward may take sizes (ints) as well as tensors
            ctx.kinds = [isinstance(v, Tensor) for v in saved]
            ctx.numbers = [v for v in saved if not isinstance(v, Tensor)]
            ctx.shapes = [tuple(o.shape) for o in outs]
            ctx.save_for_backward(*[v for v in saved if isinstance(v, Tensor)])
            ctx.mark_non_differentiable(*[o for o, d in zip(outs, info.differentiable, strict=True) if not d])
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grad_outputs):
            # The backward graph was traced with contiguous tangents; an unused output's is zero.
            pairs = zip(grad_outputs, ctx.shapes, info.metas, info.differentiable, strict=True)
            tangents = [(g if g is not None else zeros(shape, dtype=dtype, device=device)).contiguous()
                        for g, shape, (_, dtype, device), d in pairs if d]
            tensors, numbers = iter(ctx.saved_tensors), iter(ctx.numbers)
            saved = [next(tensors) if kind else next(numbers) for kind in ctx.kinds]
            grads = tuple(backward_compiled(*saved, *tangents))
            if GradMode.is_enabled():       # create_graph: the gradients get a node that refuses
                grads = CompiledFunctionBackward.apply(len(grads), *grads, *ctx.saved_tensors, *tangents)
            return grads

    return CompiledFunction


class CompiledFunctionBackward(Function):
    """The node a compiled backward's gradients get under ``create_graph=True``: the backward
    graph was compiled without its own derivatives, so a double backward raises, as torch's
    ``CompiledFunctionBackwardBackward`` does."""

    @staticmethod
    def forward(ctx, count, *tensors):
        """The gradients (the first ``count`` tensors), whose graph reaches the saved values and
        tangents after them, as torch's node does."""
        return tuple(t.view_as(t) if t is not None else t for t in tensors[:count])

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")


def aot_function(fn, fw_compiler, bw_compiler=None, *, decompositions=None):
    """``aot_function(fn, fw_compiler, bw_compiler)(*args)``: compile ``fn`` for the metadata of
    ``args`` on the first call and run the compiled forward (with the compiled backward as its
    ``grad_fn``). As torch's, each compiler is called with a graph and its example inputs (the
    placeholders' fake values) and returns a callable; ``bw_compiler`` defaults to
    ``fw_compiler``. Pass ``lambda gm, example_inputs: gm`` to run the graphs as traced.
    As torch's, the graphs keep the operators the program ran (``_softmax``, not its pieces)
    unless ``decompositions`` (a table such as ``core_aten_decompositions()``) is given."""
    cache = {}
    bw_compiler = fw_compiler if bw_compiler is None else bw_compiler
    decompositions = dict(decompositions or {})

    def run(*args):
        key = tuple((tuple(a.shape), a.stride(), a.dtype, str(a.device), a.requires_grad) for a in args)
        if key not in cache:
            cache[key] = AOTCompiled(fn, args, lambda gm: fw_compiler(gm, _example_inputs(gm)),
                                     bw_compiler=lambda gm: bw_compiler(gm, _example_inputs(gm)),
                                     decompositions=decompositions)
        return cache[key](*args)
    run.cache = cache
    return run


def _example_inputs(gm):
    return [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
