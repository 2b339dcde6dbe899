"""``fx.subgraph_rewriter.replace_pattern`` against torch.fx's: the same matches (anchor and node
pairs, by name), the same rewritten graph and code, and the same results after the rewrite."""
import pytest
import torch
from helpers import fx_code, fx_nodes

import internals


def _cat_sum(L):
    """torch's documented example: two copies of a pattern reading the same inputs."""
    def program(x, w1, w2):
        m1 = L.cat([w1, w2]).sum()
        m2 = L.cat([w1, w2]).sum()
        return x + L.max(m1) + L.max(m2)

    def pattern(w1, w2):
        return L.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return L.stack([w1, w2])
    return program, pattern, replacement, 3


def _relu_shift(L):
    """Literals must match (``* 2`` is a match, ``* 3`` is not); a method call in the replacement."""
    def program(x, y):
        a = L.relu(x * 2) + 1
        b = L.relu(y * 2) + 1
        c = L.relu(y * 3) + 1
        return a.neg() + b + c

    def pattern(x):
        return L.relu(x * 2) + 1

    def replacement(x):
        return L.sigmoid(x).mul(2)
    return program, pattern, replacement, 2


def _chained(L):
    """The second match reads what the first replacement produced."""
    def program(x):
        y = L.relu(x * 2) + 1
        return L.relu(y * 2) + 1
    return program, _relu_shift(L)[1], _relu_shift(L)[2], 1


def _leaking(L):
    """An inner node read outside the pattern: no match."""
    def program(x):
        t = x * 2
        return L.relu(t) + 1, t
    return program, _relu_shift(L)[1], _relu_shift(L)[2], 1


def _two_outputs(L):
    """A pattern with two results, so two anchors."""
    def program(x):
        a, b = x.sin(), x.cos()
        return a + b, a * b

    def pattern(x):
        return x.sin(), x.cos()

    def replacement(x):
        return x.cos(), x.sin()
    return program, pattern, replacement, 1


CASES = {"cat_sum": _cat_sum, "relu_shift": _relu_shift, "chained": _chained, "leaking": _leaking,
         "two_outputs": _two_outputs}


def _flat(out):
    out = out if isinstance(out, tuple) else (out,)
    return [x for v in out for x in v.flatten().tolist()]


@pytest.mark.parametrize("case", CASES)
def test_replace_pattern_matches_torch(case):
    logs = []
    for L in (internals, torch):
        program, pattern, replacement, n_inputs = CASES[case](L)
        gm = L.fx.symbolic_trace(program)
        matches = L.fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        gm.graph.lint()
        found = [(type(m).__name__, m.anchor.name, sorted((p.name, g.name) for p, g in m.nodes_map.items()))
                 for m in matches]
        inputs = [L.tensor([0.5, -1.0, 2.0]) * (i + 1) for i in range(n_inputs)]
        logs.append((found, fx_nodes(gm), fx_code(gm, L), _flat(gm(*inputs))))
    assert logs[0][:3] == logs[1][:3]
    assert logs[0][3] == pytest.approx(logs[1][3], rel=1e-6)
    assert internals.fx.replace_pattern is internals.fx.subgraph_rewriter.replace_pattern
