"""Autocast's cast cache (``cached_cast`` in aten/src/ATen/autocast_mode.cpp), against torch.

A float32 leaf that requires grad is cast to the region's lower precision once per autocast
region; every operator that reads it shares that cast, so the backward graph has one
``ToCopyBackward0`` node with several edges into it. The graphs are compared whole: node names
and edges, in one deterministic walk.
"""
import threading

import pytest
import torch
from helpers import assert_same_error

import internals


def graph(root):
    """The backward graph under ``root`` as rows ``(name, [index of each next node])``, nodes
    numbered in breadth-first order of first visit (a node reached twice keeps one number)."""
    index, order, queue = {}, [], [root]
    index[root] = 0
    while queue:
        node = queue.pop(0)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in index:
                index[nxt] = len(index)
                queue.append(nxt)
    return [(n.name(), [None if nxt is None else index[nxt] for nxt, _ in n.next_functions]) for n in order]


def leaves(lib, requires_grad=True):
    g = torch.Generator().manual_seed(0)
    w = torch.rand(3, 3, generator=g)
    x = torch.rand(3, 3, generator=g)
    if lib is internals:
        w, x = internals.from_torch(w), internals.from_torch(x)
    return w.requires_grad_(requires_grad), x


def two_uses(lib, w, x):
    """The same weight read by two products in one region, and twice by one product."""
    with lib.autocast("cpu"):
        return (w.mm(w) + x.mm(w)).sum()


@pytest.mark.parametrize("program", ["two_uses", "nested", "mm_self"])
def test_autocast_graph_matches_torch(program):
    def run(lib):
        w, x = leaves(lib)
        if program == "two_uses":
            return two_uses(lib, w, x)
        if program == "mm_self":
            with lib.autocast("cpu"):
                return w.mm(w)
        with lib.autocast("cpu"):            # the inner region's exit keeps the cache
            with lib.autocast("cpu"):
                a = w.mm(x)
            return (a + w.mm(x)).sum()
    ours, theirs = graph(run(internals).grad_fn), graph(run(torch).grad_fn)
    assert ours == theirs


def test_one_cast_node_for_a_leaf_used_twice():
    w, x = leaves(internals)
    root = two_uses(internals, w, x).grad_fn
    casts = {id(n) for n in _walk(root) if n.name() == "ToCopyBackward0"}
    assert len(casts) == 1


def test_cache_is_cleared_when_the_outermost_region_exits():
    for lib in (torch, internals):
        w, x = leaves(lib)
        with lib.autocast("cpu"):
            first = w.mm(x)
        with lib.autocast("cpu"):
            second = w.mm(x)
        cast_of = [r.grad_fn.next_functions[0][0] for r in (first, second)]
        assert cast_of[0] is not cast_of[1], lib.__name__


@pytest.mark.parametrize("case", ["no_grad_leaf", "non_leaf", "cache_disabled"])
def test_uncached_casts_match_torch(case):
    """Only a leaf that requires grad is cached; a tensor made inside the region, and every tensor
    when the region says ``cache_enabled=False``, is cast at each use."""
    def run(lib):
        w, x = leaves(lib, requires_grad=case != "no_grad_leaf")
        kwargs = {"cache_enabled": False} if case == "cache_disabled" else {}
        with lib.autocast("cpu", **kwargs):
            if case == "non_leaf":
                w = w * 2
            if case == "no_grad_leaf":
                x.requires_grad_()
            return (w.mm(w) + x.mm(w)).sum()
    assert graph(run(internals).grad_fn) == graph(run(torch).grad_fn)


def _walk(root):
    seen, stack = [], [root]
    while stack:
        node = stack.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return seen


def test_linear_under_bfloat16_autocast_rounds_once_as_torch():
    """torch's 16-bit addmm adds the bias to the float32 product and rounds once: rounding the
    product first would move some outputs by one bfloat16 ulp."""
    torch.manual_seed(0)
    x, w, b = torch.randn(6, 8), torch.randn(16, 8), torch.randn(16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = torch.nn.functional.linear(x, w, b)
    with internals.autocast("cpu", dtype=internals.bfloat16):
        got = internals.nn.functional.linear(*(internals.from_torch(t) for t in (x, w, b)))
    assert got.dtype is internals.bfloat16 and torch.equal(got.to_torch(), expected)
    products = (x.bfloat16().float() @ w.bfloat16().float().t()).bfloat16().float()
    assert not torch.equal(expected, (products + b.bfloat16().float()).bfloat16())    # the case tells them apart



def _autocast_state(lib):
    """The top-level queries inside and outside a CPU region, and on a thread started inside it
    (a region belongs to the thread that entered it); dtypes by name."""
    def name(dtype):
        return str(dtype).split(".")[-1]
    seen = {}
    with lib.autocast("cpu", dtype=lib.float16):
        thread = threading.Thread(target=lambda: seen.setdefault("thread", lib.is_autocast_enabled("cpu")))
        thread.start()
        thread.join()
        inside = [lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda:0"),
                  name(lib.get_autocast_dtype("cpu"))]
    outside = [lib.is_autocast_enabled("cpu"), name(lib.get_autocast_dtype("cpu")),
               name(lib.get_autocast_dtype("cuda"))]
    return [inside, outside, seen["thread"]]


def test_autocast_queries_at_the_top_level_as_torch():
    assert _autocast_state(internals) == _autocast_state(torch)


@pytest.mark.parametrize("call", [
    lambda lib: lib.is_autocast_enabled("xyz"),
    lambda lib: lib.get_autocast_dtype("xyz"),
    lambda lib: lib.is_autocast_enabled("meta"),
], ids=["no-device", "no-device-dtype", "meta"])
def test_autocast_queries_refuse_a_device_without_autocast(call):
    assert_same_error(lambda: call(internals), lambda: call(torch))
