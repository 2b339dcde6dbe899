"""The adaptive softmax of Grave et al. (``torch/nn/modules/adaptive.py``).

Frequent classes (below ``cutoffs[0]``) get a row in the head; each rarer band of classes is one
extra head entry (its cluster) plus a small two-layer tail whose hidden width shrinks by
``div_value`` per band. A class's log-probability is its head entry's, plus, for a tail class,
its log-probability within the cluster.
"""
from collections import namedtuple

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _checked_cutoffs(cutoffs, n_classes):
    """The cutoffs as a list: non-empty, strictly increasing integers within [1, n_classes - 1]."""
    cutoffs = list(cutoffs)
    if not cutoffs:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    increasing = all(a < b for a, b in zip(cutoffs, cutoffs[1:]))
    if (not increasing or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
            or any(int(c) != c for c in cutoffs)):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                         "order, where each value is between 1 and n_classes-1")
    return cutoffs


def _check_shapes(input, target):
    """One example (1-D input, 0-D target) or a batch (2-D input, 1-D target of the same length)."""
    if target.dim() == 1:
        if input.size(0) != target.size(0):
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        if input.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size {input.size()}")
    elif target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size {input.size()}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive log-softmax with its negative log-likelihood (``adaptive.py``)."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = _checked_cutoffs(cutoffs, n_classes)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // div_value ** (i + 1))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, width, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for to_hidden, to_out in self.tail:
            to_hidden.reset_parameters()
            to_out.reset_parameters()

    def forward(self, input_, target_):
        """``(output, loss)``: each target's log-probability and their negated mean."""
        _check_shapes(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = input.new_zeros(n)
        head_index = target.new_empty(n)     # which head entry each row reads: its class or its cluster
        covered = 0
        bounds = [0] + self.cutoffs
        for band, (low, high) in enumerate(zip(bounds, bounds[1:])):
            in_band = (target >= low) & (target < high)
            rows = in_band.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            if band == 0:
                head_index.index_copy_(0, rows, target[in_band])
                continue
            head_index.index_fill_(0, rows, self.shortlist_size + band - 1)
            within = F.log_softmax(self.tail[band - 1](input.index_select(0, rows)), dim=1)
            picked = within.gather(1, (target[in_band] - low).unsqueeze(1))
            output.index_copy_(0, rows, picked.squeeze(1))
        if covered != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        """Log-probabilities of all ``n_classes`` classes, rows as in ``input``."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            within = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = within + head[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Log-probabilities of every class, shape ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class per row; the tails run only for rows whose head picks a cluster."""
        head_output = self.head(input)
        best = head_output.argmax(dim=1)
        in_tail = best >= self.shortlist_size
        if not in_tail.any():
            return best
        if in_tail.all():
            return self._full_log_prob(input, head_output).argmax(dim=1)
        best[in_tail] = self._full_log_prob(input[in_tail], head_output[in_tail]).argmax(dim=1)
        return best
