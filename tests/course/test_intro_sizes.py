"""The sizes the book's introduction gives for the package are the package's sizes.

The intro tells a reader how much code there is before they open it: the hand-written lines, the
lines the code generator writes, and the core the first six chapters build on. Each figure is
read from ``book/intro.md`` and measured on ``src/internals``; it may be rounded, not stale.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "internals"
GENERATED = ("_generated", "autograd/generated")
CORE = ("c10/tensor_impl.py", "c10/storage.py", "aten/tensor_iterator.py", "aten/dispatcher.py",
        "autograd/engine.py")
TOLERANCE = 0.10     # "about 50,000" stays true within this fraction of the measured count


def lines(paths):
    return sum(len(p.read_text().splitlines()) for p in paths)


def is_generated(path):
    relative = path.relative_to(PACKAGE).as_posix()
    return any(relative.startswith(folder + "/") for folder in GENERATED)


def measured():
    files = list(PACKAGE.rglob("*.py"))
    return {"hand-written": lines(p for p in files if not is_generated(p)),
            "generated": lines(p for p in files if is_generated(p)),
            "core": lines(PACKAGE / name for name in CORE)}


def stated():
    """The three figures of the intro's paragraph on the package's size, as integers."""
    text = " ".join((ROOT / "book" / "intro.md").read_text().split())
    found = {"hand-written": r"is about ([\d,]+) lines of hand-written Python",
             "generated": r"and some ([\d,]+) more that its code generator writes",
             "core": r"the core the chapters build on, about ([\d,]+) lines"}
    figures = {}
    for name, pattern in found.items():
        match = re.search(pattern, text)
        assert match, f"intro.md no longer states the {name} size this test reads"
        figures[name] = int(match.group(1).replace(",", ""))
    return figures


@pytest.mark.parametrize("name", ["hand-written", "generated", "core"])
def test_intro_states_the_package_size(name):
    want, said = measured()[name], stated()[name]
    assert abs(said - want) <= TOLERANCE * want, f"intro.md says {said:,} {name} lines; there are {want:,}"


def test_the_core_files_exist():
    missing = [name for name in CORE if not (PACKAGE / name).is_file()]
    assert missing == []
