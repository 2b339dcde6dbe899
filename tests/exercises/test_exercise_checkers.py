"""The core exercises' checkers against a catalogue of wrong answers learners write, and the
plug-in that runs the package on the reader's version (``internals.exercises.use_mine``).

Each checker must reject every wrong answer in its catalogue and accept the package's own
function (the solution). A checker that a wrong answer passes would tell a reader their bug is
right, so these are the checkers' own tests."""
import math
import re

import pytest
import torch
import yaml

import internals
from internals import exercises as ex
from internals._inductor.scheduler import EXPRESSIONS, can_join, new_group, schedule
from internals.aten import dispatcher
from internals.aten.dispatcher import dispatch_key
from internals.aten.native.convolution import im2col_columns
from internals.aten.native.tensor_shape import compute_stride
from internals.aten.tensor_iterator import _reorder, coalesce
from internals.autograd.engine import compute_dependencies
from internals.autograd.functions_manual import sum_to
from internals.c10.dispatch_key import DispatchKey, DispatchKeySet
from internals.c10.tensor_impl import contiguous_strides, required_storage_elements
from internals.codegen import gen_autograd, operator_from_yaml
from internals.codegen.operator_from_yaml import OperatorRegistration, register_operator
from internals.cuda.caching_allocator import get_allocation_size, round_size
from internals.optim.sgd import sgd_step


# ---------------------------------------------------------------- chapter 1: contiguous strides
def strides_zero_dims_zero_the_rest(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size                    # a size-0 dim makes every stride before it 0
    return tuple(reversed(strides))


def strides_column_major(shape):
    strides, step = [], 1
    for size in shape:
        strides.append(step)
        step *= max(size, 1)
    return tuple(strides)


def strides_not_reversed(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(strides)


def strides_multiplied_first(shape):
    strides, step = [], 1
    for size in reversed(shape):
        step *= max(size, 1)            # off by one dim
        strides.append(step)
    return tuple(reversed(strides))


def strides_one_for_size_one(shape):
    return tuple(1 if size == 1 else s for size, s in zip(shape, contiguous_strides(shape)))


# ---------------------------------------------------------------- chapter 2: view's strides
def view_contiguous_only(shape, strides, new_shape):
    return contiguous_strides(new_shape) if tuple(strides) == contiguous_strides(shape) else None


def view_none_when_empty(shape, strides, new_shape):
    return None if 0 in shape else compute_stride(shape, strides, new_shape)


def view_never_refuses(shape, strides, new_shape):
    return contiguous_strides(new_shape)


def view_without_chunk_base(shape, strides, new_shape):
    """computeStride, but a chunk is contiguous when stride == numel (the chunk's base stride forgotten)."""
    if not shape:
        return (1,) * len(new_shape)
    if math.prod(shape) == 0:
        return compute_stride(shape, strides, new_shape)
    new_strides, view_d, base = [0] * len(new_shape), len(new_shape) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


def view_size_one_dims_break_chunks(shape, strides, new_shape):
    """computeStride without its exception for size-1 dims (their stride is free)."""
    if not shape:
        return (1,) * len(new_shape)
    if math.prod(shape) == 0:
        return compute_stride(shape, strides, new_shape)
    new_strides, view_d, base = [0] * len(new_shape), len(new_shape) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or strides[d - 1] != tensor_numel * base:
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


def view_forgets_zero_dim_tensors(shape, strides, new_shape):
    return compute_stride(shape, strides, new_shape) if shape else None


# ---------------------------------------------------------------- chapter 3: storage size
def storage_without_offset(shape, strides, offset):
    return required_storage_elements(shape, strides, 0)


def storage_empty_still_counts(shape, strides, offset):
    return offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def storage_size_times_stride(shape, strides, offset):
    return 0 if 0 in shape else offset + sum(n * s for n, s in zip(shape, strides))


def storage_max_not_sum(shape, strides, offset):
    return 0 if 0 in shape else offset + 1 + max([(n - 1) * s for n, s in zip(shape, strides)], default=0)


def storage_without_the_last_element(shape, strides, offset):
    return 0 if 0 in shape else offset + sum((n - 1) * s for n, s in zip(shape, strides))


# ---------------------------------------------------------------- chapter 4: reorder_dimensions
def reorder_by_first_operand(shape, strides):
    return sorted(range(len(shape)), key=lambda d: strides[0][d])


def reorder_zeros_first(shape, strides):
    return sorted(range(len(shape)), key=lambda d: (min(s[d] for s in strides), -d))


def reorder_row_major(shape, strides):
    return list(range(len(shape) - 1, -1, -1))


def reorder_slowest_first(shape, strides):
    return list(reversed(_reorder(shape, strides)))


def reorder_without_size_tie_break(shape, strides):
    def should_swap(d0, d1):
        for s in strides:
            if s[d0] and s[d1] and s[d0] != s[d1]:
                return 1 if s[d0] > s[d1] else -1
        return 0
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    return perm


def reorder_lexicographic(shape, strides):
    return sorted(range(len(shape)), key=lambda d: tuple(s[d] or math.inf for s in strides))


# ---------------------------------------------------------------- chapter 4: coalesce_dimensions
def _coalesce_with(shape, strides, mergeable, fold_size_one=True):
    shape, strides = list(shape), [list(s) for s in strides]
    if not shape:
        return [], [[] for _ in strides]
    prev = 0
    for d in range(1, len(shape)):
        if mergeable(shape, strides, prev, d):
            if fold_size_one and shape[prev] == 1:
                for s in strides:
                    s[prev] = s[d]
            shape[prev] *= shape[d]
        else:
            prev += 1
            for s in strides:
                s[prev] = s[d]
            shape[prev] = shape[d]
    return shape[:prev + 1], [s[:prev + 1] for s in strides]


def coalesce_first_operand_only(shape, strides):
    return _coalesce_with(shape, strides, lambda n, ss, p, d: n[p] == 1 or n[d] == 1 or n[p] * ss[0][p] == ss[0][d])


def coalesce_strides_only(shape, strides):
    return _coalesce_with(shape, strides, lambda n, ss, p, d: all(n[p] * s[p] == s[d] for s in ss))


def coalesce_wrong_factor(shape, strides):
    return _coalesce_with(shape, strides,
                          lambda n, ss, p, d: n[p] == 1 or n[d] == 1 or all(n[d] * s[p] == s[d] for s in ss))


def coalesce_never(shape, strides):
    return list(shape), [list(s) for s in strides]


def coalesce_everything(shape, strides):
    return [math.prod(shape)], [[s[0] if s else 1] for s in strides]


def coalesce_size_one_keeps_its_stride(shape, strides):
    return _coalesce_with(shape, strides, lambda n, ss, p, d: n[p] == 1 or n[d] == 1 or all(
        n[p] * s[p] == s[d] for s in ss), fold_size_one=False)


# ---------------------------------------------------------------- chapter 5: the call's dispatch key
def _union(key_sets):
    keys = DispatchKeySet()
    for k in key_sets:
        keys = keys | k
    return keys


def key_ignores_fallthrough(key_sets, included, excluded, fallthrough):
    return ((_union(key_sets) | included) - excluded).highest()


def key_ignores_excluded(key_sets, included, excluded, fallthrough):
    return ((_union(key_sets) | included) - fallthrough).highest()


def key_excludes_before_including(key_sets, included, excluded, fallthrough):
    return (((_union(key_sets) - excluded) | included) - fallthrough).highest()


def key_lowest_not_highest(key_sets, included, excluded, fallthrough):
    return min(((_union(key_sets) | included) - excluded) - fallthrough, default=None)


def key_ignores_included(key_sets, included, excluded, fallthrough):
    return ((_union(key_sets) - excluded) - fallthrough).highest()


def key_first_tensor_only(key_sets, included, excluded, fallthrough):
    return (((_union(key_sets[:1]) | included) - excluded) - fallthrough).highest()


def key_max_raises_when_nothing_is_left(key_sets, included, excluded, fallthrough):
    return max(((_union(key_sets) | included) - excluded) - fallthrough)


def key_as_a_table_row(key_sets, included, excluded, fallthrough):
    key = dispatch_key(key_sets, included, excluded, fallthrough)
    return None if key is None else int(key) - 1        # the chapter's row number, not a key


# ---------------------------------------------------------------- chapter 6: sum_to
def sum_to_leading_dims_only(grad, shape):
    lead = grad.dim() - len(shape)
    return grad.sum(list(range(lead))) if lead else grad


def sum_to_without_keepdim(grad, shape):
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    return grad.sum(dims) if dims else grad


def sum_to_aligned_on_the_left(grad, shape):
    dims = list(range(len(shape), grad.dim())) + [i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1]
    return grad.sum(dims, keepdim=True).reshape(shape) if dims else grad


def sum_to_no_reduction(grad, shape):
    return grad


def sum_to_mean(grad, shape):
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    return grad.mean(dims, keepdim=True).reshape(shape) if dims else grad


def sum_to_sums_every_small_dim(grad, shape):
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s <= 1]      # size 0 as well
    summed = grad.sum(dims, keepdim=True) if dims else grad
    return summed.reshape(tuple(1 if s == 0 else s for s in shape))


def sum_to_squeezes_every_size_one_dim(grad, shape):
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    return grad.sum(dims, keepdim=True).squeeze() if dims else grad        # the input's own 1s go too


# ---------------------------------------------------------------- chapter 6: compute_dependencies
def _walk(roots, seen_from_roots=True, distinct=False, key=lambda node: node):
    deps, seen, stack = {}, set(roots) if seen_from_roots else set(), list(roots)
    while stack:
        node = stack.pop()
        nexts = [n for n, _ in node.next_functions if n is not None]
        for nxt in (dict.fromkeys(nexts) if distinct else nexts):
            deps[key(nxt)] = deps.get(key(nxt), 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def deps_counts_parents_not_edges(roots):
    return _walk(roots, distinct=True)


def deps_roots_not_marked_seen(roots):
    return _walk(roots, seen_from_roots=False)


def deps_without_a_seen_set(roots):
    deps, stack = {}, list(dict.fromkeys(roots))
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                stack.append(nxt)            # a node reached twice is walked twice
    return deps


def deps_direct_children_only(roots):
    deps = {}
    for root in dict.fromkeys(roots):
        for nxt, _ in root.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
    return deps


def deps_counts_the_roots_once(roots):
    deps = _walk(roots)
    for root in roots:
        deps[root] = deps.get(root, 0) + 1       # as if something pointed at each root
    return deps


def deps_by_node_name(roots):
    by_name = _walk(roots, key=lambda node: node.name())
    return {node: by_name[node.name()] for node in _walk(roots)}


# ---------------------------------------------------------------- chapter 10: im2col
def _unfold(x, kernel, stride, padding, dilation, *, order="ckk", pad_both=True, row_major=True):
    """im2col by slicing a zero-padded copy; the keywords make the wrong answers below."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    tail_h, tail_w = (ph, pw) if pad_both else (0, 0)
    padded = internals.zeros(n, c, h + ph + tail_h, w + pw + tail_w, dtype=x.dtype)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    oh = (h + ph + tail_h - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pw + tail_w - dw * (kw - 1) - 1) // sw + 1
    taps = [padded[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    cols = internals.stack(taps, 2)                          # (N, C, kh·kw, OH, OW)
    if order == "kkc":
        cols = cols.transpose(1, 2)
    if not row_major:
        cols = cols.transpose(3, 4)
    return cols.reshape(n, c * kh * kw, oh * ow)


def im2col_ignores_padding(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, stride, (0, 0), dilation)


def im2col_taps_before_channels(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, stride, padding, dilation, order="kkc")


def im2col_column_major_positions(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, stride, padding, dilation, row_major=False)


def im2col_ignores_stride(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, (1, 1), padding, dilation)


def im2col_pads_one_side(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, stride, padding, dilation, pad_both=False)


def im2col_ignores_dilation(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel, stride, padding, (1, 1))


def im2col_height_and_width_swapped(x, kernel, stride, padding, dilation):
    return _unfold(x, kernel[::-1], stride[::-1], padding[::-1], dilation[::-1])


def im2col_views_the_input(x, kernel, stride, padding, dilation):
    n, c, h, w = x.shape
    planes = x.view(n * c, 1, h, w)                 # one plane per (image, channel): needs n, c adjacent
    return _unfold(planes, kernel, stride, padding, dilation).reshape(n, c * kernel[0] * kernel[1], -1)


# ---------------------------------------------------------------- chapter 7: round_size
def round_to_a_power_of_two(n, config):
    return max(512, 1 << max(n - 1, 0).bit_length())


def round_without_a_minimum(n, config):
    return 512 * -(-n // 512)


def round_down(n, config):
    return max(512, 512 * (n // 512))


def round_up_one_too_many(n, config):
    return 512 * (n // 512 + 1)


def round_only_small_sizes(n, config):
    return 512 if n < 512 else n


def round_to_the_segment_size(n, config):
    return get_allocation_size(max(512, 512 * -(-n // 512)))


# ---------------------------------------------------------------- chapter 9: sgd_step
def _sgd(params, grads, buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize,
         alias=False, dampen=True, decay_first=True, use_nesterov=True, use_maximize=True, keep=True):
    for i, p in enumerate(params):
        grad = grads[i].neg() if maximize and use_maximize else grads[i]
        if weight_decay and decay_first:
            grad = grad.add(p, alpha=weight_decay)
        if momentum:
            buf = buffers[i]
            if buf is None:
                buf = grad if alias else grad.detach().clone()
                if keep:
                    buffers[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening if dampen else 1)
            grad = grad.add(buf, alpha=momentum) if nesterov and use_nesterov else buf
        if weight_decay and not decay_first:
            grad = grad.add(p, alpha=weight_decay)
        p.add_(grad, alpha=-lr)


def sgd_buffer_is_the_gradient(*a, **k):
    _sgd(*a, **k, alias=True)


def sgd_without_dampening(*a, **k):
    _sgd(*a, **k, dampen=False)


def sgd_decay_after_momentum(*a, **k):
    _sgd(*a, **k, decay_first=False)


def sgd_nesterov_ignored(*a, **k):
    _sgd(*a, **k, use_nesterov=False)


def sgd_maximize_ignored(*a, **k):
    _sgd(*a, **k, use_maximize=False)


def sgd_buffer_not_kept(*a, **k):
    _sgd(*a, **k, keep=False)


# ---------------------------------------------------------------- chapter 11: the fusion pass
def _fuse(graph, *, flush=True, keep_eager=True, reopen=True, nodes=None, joins=can_join, opens=new_group):
    plan, group = [], None
    for node in nodes if nodes is not None else [n for n in graph.nodes if n.op == "call_function"]:
        if group is not None and joins(group, node):
            group.nodes.append(node)
            continue
        if group is not None:
            plan.append(group)
        group = opens(node) if reopen or group is None else None
        if group is None and keep_eager:
            plan.append(node)
    if group is not None and flush:
        plan.append(group)
    return plan


def fusion_forgets_the_last_group(graph):
    return _fuse(graph, flush=False)


def fusion_drops_eager_nodes(graph):
    return _fuse(graph, keep_eager=False)


def fusion_breaking_node_runs_eagerly(graph):
    return _fuse(graph, reopen=False)


def fusion_every_node_alone(graph):
    return _fuse(graph, joins=lambda group, node: False)


def fusion_walks_every_node(graph):
    return _fuse(graph, nodes=list(graph.nodes))


def fusion_pointwise_only(graph):
    def opens(node):
        group = new_group(node)
        return group if group is not None and group.kind == "pointwise" else None

    def joins(group, node):
        return can_join(group, node) and node.target.name() in EXPRESSIONS
    return _fuse(graph, joins=joins, opens=opens)


def fusion_across_interruptions(graph):
    """Groups every fusible node with the open group of its shape, even past a matrix product."""
    plan, open_groups = [], {}
    for node in [n for n in graph.nodes if n.op == "call_function"]:
        group = open_groups.get(tuple(node.meta["val"].shape))
        if group is not None and can_join(group, node):
            group.nodes.append(node)
            continue
        group = new_group(node)
        if group is None:
            plan.append(node)
        else:
            open_groups[group.shape] = group
            plan.append(group)
    return plan


# ---------------------------------------------------------------- chapter 11: counting memory passes
def passes_counting_every_argument(graph):
    calls = [n for n in graph.nodes if n.op == "call_function"]
    eager = sum(1 + sum(1 for a in n.args if hasattr(a, "op")) for n in calls)
    return eager, ex.compile.reference_memory_passes(graph)[1]


def passes_without_writes(graph):
    eager, fused = ex.compile.reference_memory_passes(graph)
    return eager - sum(n.op == "call_function" for n in graph.nodes), fused


def passes_fused_is_one(graph):
    return ex.compile.reference_memory_passes(graph)[0], 1


def passes_fused_without_outputs(graph):
    eager, fused = ex.compile.reference_memory_passes(graph)
    return eager, fused - 1


def passes_one_per_node(graph):
    calls = [n for n in graph.nodes if n.op == "call_function"]
    return 2 * len(calls), ex.compile.reference_memory_passes(graph)[1]


# ---------------------------------------------------------------- chapter 8: an operator from YAML
def _register(native, derivatives, kernels, *, registration=None, rename=None, entries=None, define=None,
              autograd_key=None, matched=None, rollback=True):
    """The package's register_operator, one step changed: the node's name (``rename``), the
    native entries read (``entries``), how each is defined (``define``), the schemas the Autograd
    kernels are generated from (``matched``), the Autograd kernel's key, the rollback."""
    infos = gen_autograd.load_derivatives(text=derivatives)
    gen_autograd.match_natives(infos, text=matched or native)
    registration = registration or OperatorRegistration()
    try:
        for entry in (entries or (lambda e: e))(yaml.safe_load(native)):
            (define or operator_from_yaml._define)(registration, entry, kernels)
        for info in infos:
            info.node = rename(info) if rename else info.node
            operator_from_yaml._register_autograd(registration, info)
    except RuntimeError:
        if rollback:
            registration.undo()
        raise
    if autograd_key:
        for i, (name, key, kernel) in enumerate(registration.kernels):
            if key == "Autograd":
                dispatcher.deregister(name, key)
                dispatcher.impl(name, autograd_key, kernel)
                registration.kernels[i] = (name, autograd_key, kernel)
    return registration


def register_without_autograd(native, derivatives, kernels):
    registration = OperatorRegistration()
    for entry in yaml.safe_load(native):
        operator_from_yaml._define(registration, entry, kernels)
    return registration


def register_node_without_number(native, derivatives, kernels):
    return _register(native, derivatives, kernels, rename=lambda info: info.node.rstrip("0123456789"))


def register_node_title_case(native, derivatives, kernels):
    """``special_entr`` -> ``Special_EntrBackward0``: str.title keeps the underscores."""
    return _register(native, derivatives, kernels, rename=lambda info: f"{info.schema.name.name.base.title()}Backward0")


def register_defaults_dropped(native, derivatives, kernels):
    """The Autograd kernel's parameters come from the schemas read without their defaults."""
    return _register(native, derivatives, kernels, matched=re.sub(r"=[^,)]+", "", native))


def register_kernel_as_composite(native, derivatives, kernels):
    """The CPU kernel under CompositeImplicitAutograd: autograd sees the kernel's inner operators."""
    def define(registration, entry, kernels):
        entry = dict(entry, dispatch={"CompositeImplicitAutograd": next(iter(entry["dispatch"].values()))})
        operator_from_yaml._define(registration, entry, kernels)
    return _register(native, derivatives, kernels, define=define)


def register_autograd_for_cuda(native, derivatives, kernels):
    return _register(native, derivatives, kernels, autograd_key="AutogradCUDA")


def register_first_entry_only(native, derivatives, kernels):
    """One native entry read: the out= overload is never defined."""
    return _register(native, derivatives, kernels, entries=lambda entries: entries[:1])


class _LeakyRegistration(OperatorRegistration):
    def undo(self):
        self.kernels = [k for k in self.kernels if k[1] != "Autograd"]    # forgets the Autograd key
        super().undo()


def register_undo_leaks_autograd(native, derivatives, kernels):
    return _register(native, derivatives, kernels, registration=_LeakyRegistration())


class _ByNameRegistration(OperatorRegistration):
    def undo(self):
        """Deregisters by name, whoever registered it since, and keeps its lists."""
        for name, key, _ in reversed(self.kernels):
            dispatcher.deregister(name, key)
        for op in self.defined:
            dispatcher.deregister(op.name)


def register_undo_by_name(native, derivatives, kernels):
    return _register(native, derivatives, kernels, registration=_ByNameRegistration())


def register_without_rollback(native, derivatives, kernels):
    return _register(native, derivatives, kernels, rollback=False)


CATALOGUE = {
    "check_contiguous_strides": (contiguous_strides, [
        strides_zero_dims_zero_the_rest, strides_column_major, strides_not_reversed, strides_multiplied_first,
        strides_one_for_size_one]),
    "check_view_strides": (compute_stride, [
        view_contiguous_only, view_none_when_empty, view_never_refuses, view_without_chunk_base,
        view_size_one_dims_break_chunks, view_forgets_zero_dim_tensors]),
    "check_storage_size": (required_storage_elements, [
        storage_without_offset, storage_empty_still_counts, storage_size_times_stride, storage_max_not_sum,
        storage_without_the_last_element]),
    "check_reorder_dimensions": (_reorder, [
        reorder_by_first_operand, reorder_zeros_first, reorder_row_major, reorder_slowest_first,
        reorder_without_size_tie_break, reorder_lexicographic]),
    "check_coalesce_dimensions": (coalesce, [
        coalesce_first_operand_only, coalesce_strides_only, coalesce_wrong_factor, coalesce_never,
        coalesce_everything, coalesce_size_one_keeps_its_stride]),
    "check_dispatch_key_rule": (dispatch_key, [
        key_ignores_fallthrough, key_ignores_excluded, key_excludes_before_including, key_lowest_not_highest,
        key_ignores_included, key_first_tensor_only, key_max_raises_when_nothing_is_left, key_as_a_table_row]),
    "check_sum_to": (sum_to, [
        sum_to_leading_dims_only, sum_to_without_keepdim, sum_to_aligned_on_the_left, sum_to_no_reduction,
        sum_to_mean, sum_to_sums_every_small_dim, sum_to_squeezes_every_size_one_dim]),
    "check_compute_dependencies": (compute_dependencies, [
        deps_counts_parents_not_edges, deps_roots_not_marked_seen, deps_without_a_seen_set, deps_direct_children_only,
        deps_counts_the_roots_once, deps_by_node_name]),
    "check_im2col": (im2col_columns, [
        im2col_ignores_padding, im2col_taps_before_channels, im2col_column_major_positions, im2col_ignores_stride,
        im2col_pads_one_side, im2col_ignores_dilation, im2col_height_and_width_swapped, im2col_views_the_input]),
    "check_round_size": (round_size, [
        round_to_a_power_of_two, round_without_a_minimum, round_down, round_up_one_too_many, round_only_small_sizes,
        round_to_the_segment_size]),
    "check_fusion_pass": (schedule, [
        fusion_forgets_the_last_group, fusion_drops_eager_nodes, fusion_breaking_node_runs_eagerly,
        fusion_every_node_alone, fusion_walks_every_node, fusion_pointwise_only, fusion_across_interruptions]),
    "check_memory_passes": (ex.compile.reference_memory_passes, [
        passes_counting_every_argument, passes_without_writes, passes_fused_is_one, passes_fused_without_outputs,
        passes_one_per_node]),
    "check_register_operator": (register_operator, [
        register_without_autograd, register_node_without_number, register_node_title_case, register_defaults_dropped,
        register_kernel_as_composite, register_autograd_for_cuda, register_first_entry_only,
        register_undo_leaks_autograd, register_undo_by_name, register_without_rollback]),
    "check_sgd_step": (sgd_step, [
        sgd_buffer_is_the_gradient, sgd_without_dampening, sgd_decay_after_momentum, sgd_nesterov_ignored,
        sgd_maximize_ignored, sgd_buffer_not_kept]),
}


@pytest.mark.parametrize("checker", sorted(CATALOGUE))
def test_the_solution_is_accepted(checker, capsys):
    solution, _ = CATALOGUE[checker]
    assert getattr(ex, checker)(solution) is True
    assert "right on all" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("checker, wrong", [(c, w) for c in sorted(CATALOGUE) for w in CATALOGUE[c][1]],
                         ids=lambda v: getattr(v, "__name__", v))
def test_a_wrong_answer_is_rejected_with_its_smallest_case(checker, wrong, capsys):
    assert getattr(ex, checker)(wrong) is False
    out = capsys.readouterr().out
    assert "smallest failing input" in out and any(w in out for w in ("torch", "allocator", "coalesce", "dispatcher"))


def test_every_plug_point_has_a_checker_and_a_catalogue():
    for point in ex.PLUG_POINTS.values():
        assert point.checker in CATALOGUE, f"{point.name}'s checker has no catalogue of wrong answers"
        assert point.default() is CATALOGUE[point.checker][0]
        assert len(CATALOGUE[point.checker][1]) >= 5


# ---------------------------------------------------------------- use_mine: the package runs on the reader's code
def _counting(fn):
    def reader_copy(*args, **kwargs):
        return fn(*args, **kwargs)
    return reader_copy


def _program(lib):
    """Views, reshapes, an elementwise op over transposed operands, a reduction: each plug point's path."""
    x = lib.arange(24.0).reshape(2, 3, 4)
    y = x.permute(2, 0, 1)[:, :, ::2] * 2 + x.permute(2, 0, 1)[:, :, 1::2]
    z = y.reshape(4, 4).t().contiguous().view(2, 8)
    w = lib.empty_strided((3, 4), (1, 3)).fill_(1.0) + lib.ones(4)
    return [y, z, w, z.sum(0), x.as_strided((2, 2), (5, 1), 3)]


@pytest.mark.parametrize("name", ["contiguous_strides", "view_strides", "storage_size", "reorder_dimensions",
                                  "coalesce_dimensions", "dispatch_key"])
def test_the_package_runs_on_a_plugged_in_version_and_still_equals_torch(name):
    point = ex.PLUG_POINTS[name]
    with ex.use_mine(name, _counting(point.default())) as mine:
        results = _program(internals)
    assert mine.calls > 0, f"the program never reached the plugged-in {name}"
    for ours, theirs in zip(results, _program(torch)):
        internals.testing.check(ours, theirs)
    assert point.default() is CATALOGUE[point.checker][0]       # restored


def test_a_wrong_version_plugged_in_changes_what_the_package_does():
    with ex.use_mine("view_strides", view_never_refuses):
        y = internals.arange(6.0).reshape(2, 3).t().view(6)     # torch refuses this view
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        internals.arange(6.0).reshape(2, 3).t().view(6)


def test_the_allocator_rounds_with_the_readers_round_size():
    from internals.cuda.caching_allocator import DeviceCachingAllocator, DeviceMemory
    allocator = DeviceCachingAllocator(DeviceMemory(capacity=2**30))
    with ex.use_mine("round_size", _counting(round_size)) as mine:
        block = allocator.malloc(1000)
    assert mine.calls == 1 and block.size == 1024
    allocator.free(block)


def test_the_capstones_optimizer_steps_with_the_readers_sgd_step():
    torch.manual_seed(0)
    model_t = torch.nn.Linear(3, 2)
    model_i = internals.nn.Linear(3, 2)
    model_i.load_state_dict({k: internals.from_torch(v) for k, v in model_t.state_dict().items()})
    opt_t = torch.optim.SGD(model_t.parameters(), lr=0.1, momentum=0.9)
    opt_i = internals.optim.SGD(model_i.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(5, 3)
    with ex.use_mine("sgd_step", _counting(sgd_step)) as mine:
        for _ in range(3):
            for model, opt, inp in ((model_t, opt_t, x), (model_i, opt_i, internals.from_torch(x))):
                opt.zero_grad()
                model(inp).pow(2).sum().backward()
                opt.step()
    assert mine.calls == 3
    for (name, p_t), p_i in zip(model_t.named_parameters(), model_i.parameters()):
        # a product's sums group differently on each CPU path: a few ulps of 1 after three steps
        assert torch.allclose(p_i.detach().to_torch(), p_t.detach(), rtol=1e-6, atol=2e-6), name


def test_use_mine_refuses_what_it_cannot_do():
    with pytest.raises(KeyError, match="no plug point named"):
        ex.use_mine("strides", contiguous_strides)
    with pytest.raises(TypeError, match="needs a function"):
        ex.use_mine("view_strides", 3)
    with ex.use_mine("view_strides", compute_stride):
        with pytest.raises(RuntimeError, match="already plugged in"):
            ex.use_mine("view_strides", compute_stride)
    assert ex.plugged() == {}


def test_restore_without_a_with_block_and_a_module_imported_meanwhile():
    import sys
    mine = ex.use_mine("contiguous_strides", _counting(contiguous_strides))
    assert "internals.c10.tensor_impl.contiguous_strides" in mine.sites
    internals.empty(2, 3)
    sys.modules.pop("internals.aten.native.batch_linear_algebra", None)
    import internals.aten.native.batch_linear_algebra as late  # takes the reader's version
    assert late.contiguous_strides is mine.wrapper
    ex.restore()
    assert late.contiguous_strides is contiguous_strides
    assert internals.c10.tensor_impl.contiguous_strides is contiguous_strides
    assert mine.calls >= 1


def test_compile_generates_its_kernels_from_the_readers_fusion_pass():
    x = internals.randn(16, 9)
    with ex.use_mine("fusion_pass", _counting(schedule)) as mine:
        compiled = internals.compile(lambda x: internals.softmax(x, -1) * 2)
        out = compiled(x)
    assert mine.calls == 1 and len(compiled.kernels) == 1
    internals.testing.check(out, torch.softmax(x.to_torch(), -1) * 2)
    with ex.use_mine("fusion_pass", fusion_every_node_alone):
        unfused = internals.compile(lambda x: internals.softmax(x, -1) * 2)
        internals.testing.check(unfused(x), torch.softmax(x.to_torch(), -1) * 2)
    assert len(unfused.kernels) > 1          # one kernel per node: the reader's plan was used


def test_a_plugged_in_dispatch_key_chooses_the_kernel():
    # Answering CPU for every call skips the autograd layer: no graph is recorded.
    x = internals.ones(2, requires_grad=True)
    with ex.use_mine("dispatch_key", lambda *sets: DispatchKey.CPU) as mine:
        y = x * 2
    assert mine.calls >= 1 and y.grad_fn is None
    assert (x * 2).grad_fn.name() == "MulBackward0"


def _broadcasting_backward(lib):
    """Gradients that need sum_to (broadcast operands) and a graph with shared nodes, from two roots."""
    a = lib.arange(6.0).reshape(2, 3).requires_grad_()
    b = lib.tensor([[1.0], [2.0]], requires_grad=True)
    c = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (a * b + c).sin()
    z = y * y + b
    lib.autograd.backward([z.sum(), y.sum()])
    return a.grad, b.grad, c.grad


@pytest.mark.parametrize("name", ["sum_to", "compute_dependencies"])
def test_backward_runs_on_a_plugged_in_engine_piece_and_still_equals_torch(name):
    point = ex.PLUG_POINTS[name]
    with ex.use_mine(name, _counting(point.default())) as mine:
        ours = _broadcasting_backward(internals)
    assert mine.calls >= 1
    for g_ours, g_theirs in zip(ours, _broadcasting_backward(torch)):
        assert torch.allclose(g_ours.to_torch(), g_theirs)


def test_a_wrong_dependency_count_plugged_in_changes_the_gradients():
    # Two roots, the second reachable from the first: walked twice, its edges are counted twice,
    # so y's node waits for gradients that never come, and a gets none.
    with ex.use_mine("compute_dependencies", deps_roots_not_marked_seen):
        a = internals.tensor([0.5, 1.5], requires_grad=True)
        y = a.sin()
        z = y * y
        internals.autograd.backward([z + y, z], [internals.ones(2), internals.ones(2)])
    assert a.grad is None


def _convolutions(lib):
    """A strided, padded, dilated and a grouped convolution, forward and backward."""
    g = torch.Generator().manual_seed(0)
    tensors = [torch.randn(shape, generator=g) for shape in ((2, 4, 7, 6), (3, 4, 3, 2), (4, 2, 2, 2))]
    x, w1, w2 = ((internals.from_torch(t) if lib is internals else t).requires_grad_() for t in tensors)
    out = lib.nn.functional.conv2d(x, w1, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    out2 = lib.nn.functional.conv2d(x, w2, groups=2)
    (out.sum() + (out2 * out2).sum()).backward()
    return out, out2, x.grad, w1.grad, w2.grad


def test_convolutions_run_on_a_plugged_in_im2col_and_still_equal_torch():
    with ex.use_mine("im2col", _counting(im2col_columns)) as mine:
        ours = _convolutions(internals)
    assert mine.calls == 4              # each convolution's forward, and its weight's gradient
    for o, t in zip(ours, _convolutions(torch)):
        assert torch.allclose(o.detach().to_torch(), t.detach(), atol=1e-4)


def test_an_operator_from_yaml_through_the_readers_register_operator_and_undone():
    from internals.exercises.codebase import KERNELS, LDEXP, dispatch_table
    before = dispatch_table()
    a, b = torch.randn(2, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    x, y = (internals.from_torch(t.detach()).requires_grad_() for t in (a, b))
    with ex.use_mine("register_operator", _counting(register_operator)) as mine:
        handle = internals.library.register_operator(*LDEXP, KERNELS)
    ours, theirs = internals.ops.aten.ldexp.Tensor(x, y), torch.ldexp(a, b)
    assert mine.calls == 1 and ours.grad_fn.name() == theirs.grad_fn.name() == "LdexpBackward0"
    ours.sum().backward()
    theirs.sum().backward()
    internals.testing.check(ours.detach(), theirs.detach())
    for o, t in ((x, a), (y, b)):
        assert torch.allclose(o.grad.to_torch(), t.grad)
    handle.undo()
    assert dispatch_table() == before
    assert not hasattr(internals.ops.aten, "ldexp")


def test_a_wrong_register_operator_plugged_in_changes_what_the_package_does():
    from internals.exercises.codebase import KERNELS, LDEXP
    with ex.use_mine("register_operator", register_without_autograd):
        handle = internals.library.register_operator(*LDEXP, KERNELS)
    try:
        assert internals.ops.aten.ldexp.Tensor(internals.ones(2, requires_grad=True), internals.ones(2)).grad_fn is None
    finally:
        handle.undo()


def test_the_operators_chapter_8s_exercise_registers_are_left_out_of_the_package():
    """The exercise registers operators torch has and the package lacks: an operator the package
    gains (``special_logit`` was one, with ``torch.special``) would clash with the reader's
    registration, so each stays out, and ``internals.special.logit`` calls ``logit`` itself."""
    for name in ("ldexp", "dist", "special_entr", "special_logit"):
        assert hasattr(torch.ops.aten, name) and not hasattr(internals.ops.aten, name), name
    x = torch.tensor([0.0, 0.25, 0.75, 1.0])
    internals.testing.check(internals.special.logit(internals.from_torch(x), 0.1), torch.special.logit(x, 0.1))
