"""Which operators torch declares structured, and which the package does.

For every operator in ``src/internals/aten/native_functions.yaml`` that torch's own
``native_functions.yaml`` (as torchgen ships it) also lists, the kind of declaration on each side:
``structured`` (an out= entry with ``structured: True``: a meta and an impl step),
``delegate`` (a functional or in-place entry with ``structured_delegate:``) or ``-`` (a kernel of
its own). A mismatch is an operator torch structures and the package does not, or the reverse;
an operator of torch's structured family that the package does not declare at all (its ``.out``
overload, say) is not counted. A mismatch the package keeps on purpose is explained in the YAML,
by a comment line just above its entry that starts with ``# not structured here:``; the list of
mismatches without one should be empty (``tests/aten/test_structured_kernels.py`` checks it).

    .venv/bin/python scripts/structured_parity.py          # the mismatches, explained or not
    .venv/bin/python scripts/structured_parity.py --all    # every shared operator
"""
import argparse
import sys
from pathlib import Path

import torchgen
import yaml
from torchgen.model import FunctionSchema

ROOT = Path(__file__).resolve().parent.parent
OURS = ROOT / "src" / "internals" / "aten" / "native_functions.yaml"
TORCHS = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
MARKER = "# not structured here:"


def _entries(path):
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {str(FunctionSchema.parse(e["func"]).name): e for e in yaml.load(Path(path).read_text(), Loader=loader)}


def kind(entry):
    """``structured``, ``delegate`` or ``-``."""
    if entry.get("structured"):
        return "structured"
    return "delegate" if "structured_delegate" in entry else "-"


def explanations(path=OURS):
    """{operator: reason} from the ``# not structured here:`` comment lines, each the line just
    above its operator's ``- func:`` line."""
    lines = Path(path).read_text().splitlines()
    found = {}
    for above, line in zip(lines, lines[1:]):
        if above.startswith(MARKER) and line.startswith("- func:"):
            name = str(FunctionSchema.parse(yaml.safe_load(line)[0]["func"]).name)
            found[name] = above.removeprefix(MARKER).strip()
    return found


def table(ours_path=OURS, torchs_path=TORCHS):
    """[(operator, torch's kind, ours)] for the operators both files declare, sorted by name."""
    ours, torchs = _entries(ours_path), _entries(torchs_path)
    return [(name, kind(torchs[name]), kind(entry)) for name, entry in sorted(ours.items()) if name in torchs]


def mismatches(ours_path=OURS, torchs_path=TORCHS):
    """{operator: (torch's kind, ours)} where the two differ."""
    return {name: (theirs, ours) for name, theirs, ours in table(ours_path, torchs_path) if theirs != ours}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every operator both files declare, not only mismatches")
    args = parser.parse_args(argv)
    explained = explanations()
    rows = table() if args.all else [(n, t, o) for n, (t, o) in mismatches().items()]
    for name, theirs, ours in rows:
        note = f"  ({explained[name]})" if name in explained else ("  UNEXPLAINED" if theirs != ours else "")
        print(f"{name:45s} torch: {theirs:10s} internals: {ours:10s}{note}")
    unexplained = [n for n, t, o in rows if t != o and n not in explained]
    print(f"{len(unexplained)} mismatches without a reason in the YAML")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
