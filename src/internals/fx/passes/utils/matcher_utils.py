"""Finding a pattern graph inside a larger graph (``torch/fx/passes/utils/matcher_utils.py``).

The pattern's *anchors* are its sinks: the nodes only its output reads. For each anchor, every
node of the larger graph with the same opcode and target is a candidate; from an anchor and a
candidate the matcher walks both graphs upward together, argument by argument, a pattern
placeholder matching anything. With several anchors, a match must hold for all of them at once
(tried by backtracking). A match counts only if nothing outside it reads its inner nodes, if
fusing it would make no cycle, and, with ``remove_overlapping_matches``, if it shares no node
with an earlier match.
"""
import dataclasses

from ...graph import Node

__all__ = ["InternalMatch", "SubgraphMatcher"]


@dataclasses.dataclass
class InternalMatch:
    anchors: list                       # the pattern's anchor nodes
    nodes_map: dict = dataclasses.field(default_factory=dict)      # pattern node -> graph node
    placeholder_nodes: list = dataclasses.field(default_factory=list)
    returning_nodes: list = dataclasses.field(default_factory=list)

    def __copy__(self):
        return InternalMatch(self.anchors, dict(self.nodes_map), list(self.placeholder_nodes),
                             list(self.returning_nodes))


class SubgraphMatcher:
    """Matches ``pattern`` (a Graph) in other graphs; ``match(graph)`` returns the InternalMatches."""

    def __init__(self, pattern, match_output=False, match_placeholder=False, remove_overlapping_matches=True,
                 ignore_literals=False):
        self.pattern = pattern
        self.match_output, self.match_placeholder = match_output, match_placeholder
        self.remove_overlapping_matches, self.ignore_literals = remove_overlapping_matches, ignore_literals
        if not pattern.nodes:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.users:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern with dead code")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output = pattern.nodes[-1]
        self.pattern_returning_nodes = list(dict.fromkeys(output.all_input_nodes))
        self.pattern_anchors = ([output] if match_output else
                                [n for n in self.pattern_returning_nodes if len(n.users) == 1])

    def _nodes_are_equal(self, pn, gn, node_name_match=""):
        if not self.match_placeholder and pn.op == "placeholder":
            return True             # a placeholder stands for any value
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output", "get_attr"):
            return True             # fx compares attributes by kind only: any tensor matches a tensor
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match):
        if isinstance(pn, Node):        # a placeholder may stand for a literal, the same one each time
            if pn.op != "placeholder":
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match, node_name_match=""):
        """Whether ``gn`` and what it reads match ``pn`` and what it reads; records pairs in ``match``."""
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values() or not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()], match)

    def _match_args(self, args1, args2, match):
        if len(args1) != len(args2):
            return False
        for a1, a2 in zip(args1, args2):
            if isinstance(a1, Node) and isinstance(a2, Node):
                matched = self._match_nodes(a1, a2, match)
            elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                matched = self._match_args(a1, a2, match)
            else:
                matched = self._match_literals(a1, a2, match) or self.ignore_literals
            if not matched:
                return False
        return True

    def _is_contained(self, nodes_map):
        """No node inside the match, but those the pattern returns, is read from outside it."""
        inner = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        return all(pn in self.pattern_returning_nodes or all(user in inner for user in gn.users)
                   for gn, pn in inner.items())

    def _remove_overlapping(self, matches):
        kept, taken = [], set()
        for match in matches:
            inner = [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if not any(gn in taken for gn in inner):
                kept.append(match)
                taken.update(inner)
        return kept

    def match(self, graph, node_name_match=""):
        """Every match of the pattern in ``graph``, in the order of the anchors' candidates."""
        candidates = {}
        for anchor in self.pattern_anchors:
            for node in graph.nodes:
                if self._nodes_are_equal(anchor, node, node_name_match):
                    candidates.setdefault(anchor, []).append(node)
        candidates = list(candidates.items())
        matches = []

        def backtrack(index, match):
            if index == len(candidates):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[index]
            for node in nodes:
                attempt = match.__copy__()
                if self._match_nodes(anchor, node, attempt, node_name_match):
                    backtrack(index + 1, attempt)

        if candidates:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches if validate_partition(
            [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")])]
        return self._remove_overlapping(matches) if self.remove_overlapping_matches else matches


def validate_partition(partition):
    """False if a path leaves the nodes of ``partition`` and comes back: fused into one node, they
    would make a cycle (``torch/fx/passes/utils/fuser_utils.py``)."""
    inside = set(partition)
    queue = [user for node in inside for user in node.users if user not in inside]
    visited = set()
    while queue:
        node = queue.pop()
        if node in inside:
            return False
        visited.add(node)
        queue.extend(user for user in node.users if user not in visited)
    return True
