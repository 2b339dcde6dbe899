"""The repository root holds what README's Layout block lists, and nothing else.

Tracked files are read from ``git ls-files``, so local outputs (.venv, _build, caches) never
count; a file committed at the root by mistake does.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Not in the block: the README itself, git's own files, and what the Makefile creates
# (ignored, so never tracked, but named here so the rule reads whole).
OUTSIDE_THE_BLOCK = {"README.md", ".gitignore", ".gitattributes", ".venv", "_build", "_vendor", "node_modules"}


def layout_names(readme):
    """The top-level names in the Layout block: each line that does not start with a space begins
    with paths separated by two or more spaces, then a description (words with single spaces)."""
    block = re.search(r"^## Layout\n+```\n(.*?)^```", readme, re.S | re.M)
    assert block, "README.md has no ## Layout block"
    names = set()
    for line in block.group(1).splitlines():
        if not line or line[0].isspace():
            continue
        for field in re.split(r"\s{2,}", line.strip()):
            if " " in field:
                break
            names.add(field.split("/")[0])
    return names


def tracked_top_level():
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return {path.split("/")[0] for path in listing.decode().split("\0") if path}


def test_layout_block_is_parsed():
    names = layout_names((ROOT / "README.md").read_text())
    assert {"_config.yml", "_toc.yml", "book", "src", "tests", "Makefile", ".ci", "package-lock.json"} <= names


def test_parser_stops_at_the_description():
    readme = "## Layout\n\n```\na.txt  b/  the a and b\n        more/ words\n```\n"
    assert layout_names(readme) == {"a.txt", "b"}


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_root_holds_only_what_the_layout_lists():
    allowed = layout_names((ROOT / "README.md").read_text()) | OUTSIDE_THE_BLOCK
    assert sorted(tracked_top_level() - allowed) == []
