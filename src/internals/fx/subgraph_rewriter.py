"""``replace_pattern``: every copy of one small program inside a graph replaced by another
(``torch/fx/subgraph_rewriter.py``).

The pattern and the replacement are functions (or GraphModules) taking the same number of
inputs. The pattern is traced and matched in the graph (``SubgraphMatcher``); for each match,
the replacement's nodes are copied in just before the first node that reads the match's result,
its placeholders bound to what the pattern's placeholders matched; the readers then read the
copy, and the matched nodes are erased.
"""
from typing import NamedTuple

from ..nn import Module
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule, _copy_attr
from .passes.utils.matcher_utils import SubgraphMatcher

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: object          # the pattern's node the match was found from
    nodes_map: dict         # pattern node -> node of the graph


def _graph_of(program):
    if isinstance(program, GraphModule):
        return program.graph
    if isinstance(program, Graph):
        return program
    return symbolic_trace(program).graph


def replace_pattern(gm, pattern, replacement):
    """Replace each match of ``pattern`` in ``gm.graph`` by ``replacement``; recompile ``gm`` and
    return the matches, one ``Match`` each."""
    graph, pattern_graph = gm.graph, _graph_of(pattern)
    matches = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True).match(graph)
    replacement_graph = _graph_of(replacement)
    replaced = {}           # a returning node of an earlier match -> the copy that replaced it
    for match in matches:
        _rewrite(gm, pattern_graph, replacement_graph, match, replaced)
    gm.recompile()
    if isinstance(replacement, Module):
        _copy_missing_attributes(gm, replacement)
    return [Match(anchor=m.anchors[0], nodes_map=m.nodes_map) for m in matches]


def _rewrite(gm, pattern_graph, replacement_graph, match, replaced):
    graph = gm.graph
    inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(match.placeholder_nodes) != len(inputs):
        raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs {len(inputs)}")
    val_map = {}
    for rn, gn in zip(inputs, match.placeholder_nodes):
        new = replaced.get(gn, gn)      # an input an earlier replacement produced: its copy now
        if new is not gn:
            i = match.placeholder_nodes.index(gn)
            match.placeholder_nodes[i] = new
            key = next(pn for pn, value in match.nodes_map.items() if value is gn)
            match.nodes_map[key] = new
        val_map[rn] = new
    with graph.inserting_before(_insert_point(graph, match.returning_nodes)):
        copied = graph.graph_copy(replacement_graph, val_map)
    if not isinstance(copied, (tuple, list)):
        copied = (copied,)
    if len(match.returning_nodes) != len(copied):
        raise AssertionError(f"Returning nodes count mismatch: {len(match.returning_nodes)} vs {len(copied)}")
    for gn, new in zip(match.returning_nodes, copied):
        gn.replace_all_uses_with(new)
        replaced[gn] = new
    for pn in reversed(pattern_graph.nodes):
        if pn.op not in ("placeholder", "output"):
            graph.erase_node(match.nodes_map[pn])


def _insert_point(graph, returning):
    """The first node reading a result of the match; with none, the node after the last result."""
    users = {u for n in returning for u in n.users}
    for node in graph.nodes:
        if node in users:
            return node
    following = None
    for node in reversed(graph.nodes):
        if node in returning:
            return following
        following = node
    raise AssertionError("The insert point can't be None")


def _copy_missing_attributes(gm, replacement):
    """What the replacement's ``get_attr`` and ``call_module`` nodes name, copied onto ``gm`` where
    it lacks them (fx's ``_replace_attributes``)."""
    for node in gm.graph.nodes:
        if node.op in ("get_attr", "call_module"):
            try:
                gm.get_submodule(node.target) if node.op == "call_module" else _get_attr(gm, node.target)
            except AttributeError:
                _copy_attr(replacement, gm, node.target)


def _get_attr(module, target):
    for atom in target.split("."):
        module = getattr(module, atom)
    return module
