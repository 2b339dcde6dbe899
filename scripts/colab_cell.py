"""Keep every notebook's Colab setup cell and the README's Colab badge in sync with _config.yml.

The repository URL and branch live in one place, `repository:` in _config.yml. This script derives
from them:

* the first code cell of every notebooks/*.ipynb, which installs the course package on Colab only;
* the README's "Open in Colab" badge, between `<!-- colab-badge -->` and `<!-- /colab-badge -->`.

    python scripts/colab_cell.py          # rewrite what is out of date
    python scripts/colab_cell.py --check  # change nothing; exit 1 and list what is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
MARKER = "# Colab setup"
CELL_ID = "colab-setup"
BADGE_START, BADGE_END = "<!-- colab-badge -->", "<!-- /colab-badge -->"
BADGE_NOTEBOOK = "notebooks/01_tensors.ipynb"


def read_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def setup_source(url: str, branch: str) -> str:
    return "\n".join(
        [
            f"{MARKER}: installs the course package on Colab only; does nothing elsewhere.",
            "import sys",
            f'REPO = "{url}"',
            'if "google.colab" in sys.modules:',
            f'    %pip install -q "internals @ git+{{REPO}}@{branch}"  # IPython fills in {{REPO}}',
        ]
    )


def badge(config: dict) -> str:
    repo = config["repository"]
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?", repo["url"])
    if not match:
        sys.exit(f"_config.yml: repository.url is not a GitHub repository URL: {repo['url']}")
    owner, name = match.groups()
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    book = repo.get("path_to_book", "").strip("/")
    path = f"{book}/{BADGE_NOTEBOOK}" if book else BADGE_NOTEBOOK
    link = f"{colab}/github/{owner}/{name}/blob/{repo['branch']}/{path}"
    return f"[![Open In Colab]({colab}/assets/colab-badge.svg)]({link})"


def is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.startswith(MARKER)


def sync_notebook(nb, source: str) -> bool:
    """Make the first code cell the Colab setup cell. Returns True if `nb` changed."""
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first = code[0] if code else len(nb.cells)
    if code and is_setup_cell(nb.cells[first]):
        cell = nb.cells[first]
        if cell.source == source and not cell.outputs:
            changed = False
        else:
            cell.source, cell.outputs, changed = source, [], True
    else:
        cell = nbformat.v4.new_code_cell(source)
        if nb.nbformat_minor >= 5:  # cell ids exist from nbformat 4.5 on
            taken = {c.get("id") for c in nb.cells}
            cell.id = CELL_ID if CELL_ID not in taken else cell.id
        else:
            del cell["id"]
        nb.cells.insert(first, cell)
        changed = True
    # Folded away in the book (a reader there needs no install line); Colab shows it as usual.
    tags = cell.metadata.setdefault("tags", [])
    if "hide-cell" not in tags:
        tags.append("hide-cell")
        changed = True
    # A setup cell anywhere else is a stale copy: the first code cell is the only one.
    keep = [c for c in nb.cells if c is cell or not is_setup_cell(c)]
    changed |= len(keep) != len(nb.cells)
    nb.cells = keep
    return changed


def sync_readme(text: str, want: str) -> str | None:
    """README text with the badge replaced, or None if the markers are missing."""
    pattern = re.compile(re.escape(BADGE_START) + r".*?" + re.escape(BADGE_END), re.DOTALL)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{BADGE_START}\n{want}\n{BADGE_END}", text, count=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if out of date")
    check = parser.parse_args().check

    config = read_config()
    repo = config["repository"]
    source = setup_source(repo["url"].rstrip("/"), repo["branch"])
    stale = []

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if sync_notebook(nb, source):
            stale.append(path.relative_to(ROOT))
            if not check:
                nbformat.write(nb, path, version=4)

    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    new = sync_readme(text, badge(config))
    if new is None:
        print(f"README.md: no {BADGE_START} ... {BADGE_END} markers", file=sys.stderr)
        return 1
    if new != text:
        stale.append(Path("README.md"))
        if not check:
            readme.write_text(new, encoding="utf-8")

    if check and stale:
        print("Out of sync with _config.yml (run: python scripts/colab_cell.py):", file=sys.stderr)
        for p in stale:
            print(f"  {p}", file=sys.stderr)
        return 1
    for p in stale:
        print(f"updated {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
