"""DDP's reducer (``torch/csrc/distributed/c10d/reducer.cpp``): gradients averaged across
processes while backward is still running.

The parameters are split into buckets, each one flat tensor of gradients. A hook on every
parameter runs right after its gradient is accumulated (``autograd_hook``) and copies that
gradient, divided by the world size, into its slot of the bucket (``mark_variable_ready``).
When a bucket's last slot is filled, its all-reduce is launched without waiting
(``mark_bucket_ready``): gloo sums it in its own thread while the engine goes on computing the
gradients of earlier layers. Buckets are launched strictly in index order, so every process
issues the same collectives in the same order. When the last bucket has gone, a final callback
is queued on the engine; it waits for every all-reduce and copies the averages back into
``.grad`` (``finalize_backward``) before ``backward()`` returns.
"""
import sys

from .._functional import zeros
from ..aten.native.tensor_factories import tensor
from ..autograd.engine import queue_callback
from ..autograd.grad_mode import no_grad
from ..autograd.graph import AccumulateGrad
from ..c10 import scalar_type as st
from . import all_reduce, broadcast, get_world_size
from .bucketing import _compute_bucket_assignment_by_size

__all__ = ["Reducer", "Bucket"]

_UNFINISHED = ("Expected to have finished reduction in the prior iteration before starting a new one. Some "
               "parameters got no gradient in the last backward, so their bucket never filled: pass "
               "find_unused_parameters=True to DistributedDataParallel, or make every parameter take part in "
               "the loss.")


class Bucket:
    """One flat gradient buffer and the parameters whose gradients live in it (``Bucket`` in reducer.hpp)."""

    def __init__(self, index, variables, params, size_limit):
        self.index, self.variables, self.size_limit = index, variables, size_limit
        lengths = [params[i].numel() for i in variables]
        self.gradients = zeros(sum(lengths), dtype=params[variables[0]].dtype)
        self.views, offset = [], 0
        for i, n in zip(variables, lengths):     # each slot shaped like its parameter
            self.views.append(self.gradients.narrow(0, offset, n).view(params[i].shape))
            offset += n
        self.pending, self.work = len(variables), None


class Reducer:
    """The bucketed, overlapped all-reduce of one DDP module's gradients."""

    def __init__(self, params, bucket_indices, process_group=None, bucket_bytes_cap=25 * 1024 * 1024,
                 find_unused_parameters=False, first_bucket_bytes_cap=None, per_bucket_size_limits=None):
        self.params, self.group = list(params), process_group
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_bytes_cap = bucket_bytes_cap if first_bucket_bytes_cap is None else first_bucket_bytes_cap
        self.find_unused_parameters = find_unused_parameters
        self.div_factor = get_world_size(process_group)
        self.expect_autograd_hooks = self.require_finalize = False
        self.has_rebuilt_bucket, self.rebuilt_params = False, []
        self.unused, self.has_marked_unused, self.local_used = [], False, None
        self.ready, self.next_bucket = set(), 0
        self.events = []            # what happened, in order: the chapter's timeline and the tests read it
        self.launches = []          # (bucket index, its parameter indices) per all-reduce launched
        self._hooks = [p.register_post_accumulate_grad_hook(self._hook_for(i)) for i, p in enumerate(self.params)]
        limits = per_bucket_size_limits or [sys.maxsize] * len(bucket_indices)
        self.initialize_buckets(bucket_indices, limits)

    def _hook_for(self, index):
        def hook(param):
            self.autograd_hook(index)
        return hook

    def remove_hooks(self):
        for handle in self._hooks:
            handle.remove()

    # ------------------------------------------------------------------ buckets
    def initialize_buckets(self, bucket_indices, limits):
        """Allocate the buckets and the map from a parameter to its bucket and slot (``variable_locators_``)."""
        self.buckets = [Bucket(b, list(v), self.params, lim) for b, (v, lim) in enumerate(zip(bucket_indices, limits))]
        self.locators = {}
        for bucket in self.buckets:
            for slot, i in enumerate(bucket.variables):
                self.locators[i] = (bucket, slot)

    def should_rebuild_buckets(self):
        """Only once, and only when every backward reaches every parameter (without unused ones)."""
        return not self.find_unused_parameters and not self.has_rebuilt_bucket

    def rebuild_buckets(self):
        """Bucket again in the order the first backward produced the gradients (``rebuild_buckets``);
        rank 0's order is broadcast so that every process builds the same buckets."""
        self.ensure_prior_reduction_finished()
        if not self.should_rebuild_buckets() or not self.rebuilt_params:
            return False
        order = self._sync_order(self.rebuilt_params)
        limits = [self.first_bucket_bytes_cap, self.bucket_bytes_cap]
        indices, per_limits = _compute_bucket_assignment_by_size([self.params[i] for i in order], limits,
                                                                 tensor_indices=order)
        self.initialize_buckets(indices, per_limits)
        self.has_rebuilt_bucket, self.rebuilt_params = True, []
        return True

    def _sync_order(self, order):
        t = tensor(order, dtype=st.int64)
        broadcast(t, 0, self.group)             # ``sync_bucket_indices``: rank 0's order wins
        return t.tolist()

    # ------------------------------------------------------------------ one iteration
    def ensure_prior_reduction_finished(self):
        if self.require_finalize:
            raise RuntimeError(_UNFINISHED)

    def prepare_for_backward(self, outputs):
        """Arm the hooks for the coming backward (``prepare_for_backward``); with unused-parameter
        detection, walk the graph from ``outputs`` to find the parameters it will not reach."""
        self.ensure_prior_reduction_finished()
        self.expect_autograd_hooks = self.require_finalize = True
        self.ready, self.next_bucket = set(), 0
        for bucket in self.buckets:
            bucket.pending, bucket.work = len(bucket.variables), None
        self.events.append(("forward done",))
        if self.find_unused_parameters:
            self.local_used = zeros(len(self.params), dtype=st.int32)
            self.unused, self.has_marked_unused = self.search_unused_parameters(outputs), False

    def search_unused_parameters(self, outputs):
        """The parameters whose AccumulateGrad no output's graph reaches (``search_unused_parameters``)."""
        seen, stack, reached = set(), [t.grad_fn for t in outputs if t.grad_fn is not None], set()
        index_of = {id(p): i for i, p in enumerate(self.params)}
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad) and id(node.variable) in index_of:
                reached.add(index_of[id(node.variable)])
            stack.extend(edge[0] for edge in node._next_edges if edge is not None)
        return [i for i in range(len(self.params)) if i not in reached]

    def autograd_hook(self, index):
        """A parameter's gradient has been accumulated (``autograd_hook``)."""
        if not self.expect_autograd_hooks:      # no_sync, or a backward DDP's forward did not arm
            return
        if self.find_unused_parameters:
            self.local_used[index] = 1
            if not self.has_marked_unused:      # the unused ones count as ready at the first hook
                self.has_marked_unused = True
                for i in self.unused:
                    self.mark_variable_ready(i)
        if self.should_rebuild_buckets():
            self.rebuilt_params.append(index)
        self.mark_variable_ready(index)

    def mark_variable_ready(self, index):
        """Copy the gradient, divided by the world size, into its bucket slot; launch what is complete."""
        if index in self.ready:
            raise RuntimeError(f"Expected to mark a variable ready only once. Parameter at index {index} has been "
                               "marked as ready twice.")
        self.ready.add(index)
        bucket, slot = self.locators[index]
        grad = self.params[index].grad
        with no_grad():
            if grad is None:                    # not reached this iteration: contributes zeros
                bucket.views[slot].zero_()
            else:                               # torch multiplies by 1/world size as it copies
                bucket.views[slot].copy_(grad).mul_(1.0 / self.div_factor)
        self.events.append(("grad ready", index, bucket.index))
        bucket.pending -= 1
        if bucket.pending == 0:
            self.mark_bucket_ready(bucket.index)
        if self.next_bucket == len(self.buckets):
            if self.find_unused_parameters:     # which parameters were used anywhere?
                self.local_used_work = all_reduce(self.local_used, group=self.group, async_op=True)
            queue_callback(self.finalize_backward)

    def mark_bucket_ready(self, bucket_index):
        """Launch every bucket from ``next_bucket`` on that is complete; a later bucket waits its turn."""
        if bucket_index > self.next_bucket:
            return
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            bucket.work = all_reduce(bucket.gradients, group=self.group, async_op=True)
            self.launches.append((bucket.index, list(bucket.variables)))
            self.events.append(("all-reduce launched", bucket.index))
            self.next_bucket += 1

    def finalize_backward(self):
        """Wait for every bucket and write the averages into ``.grad`` (``finalize_backward``)."""
        self.expect_autograd_hooks = self.require_finalize = False
        if self.find_unused_parameters:
            self.local_used_work.wait()
        for bucket in self.buckets:
            bucket.work.wait()
            self.events.append(("all-reduce waited", bucket.index))
            for slot, i in enumerate(bucket.variables):
                self.copy_bucket_to_grad(self.params[i], bucket.views[slot], i)
        self.events.append(("backward done",))

    def copy_bucket_to_grad(self, param, view, index):
        """A parameter no process used keeps its gradient untouched (``copy_bucket_to_grad``)."""
        if self.find_unused_parameters and int(self.local_used[index]) == 0:
            return
        with no_grad():
            if param.grad is None:
                param.grad = view.clone()
            else:
                param.grad.copy_(view)
