"""The built book (`_build/html`) loads nothing from the network: every script, stylesheet, font and
image a page or its CSS asks for is a file of the book. Run by `make test` after the book build
(the file is not named test_*.py, so `pytest tests` does not collect it before the book exists).
"""
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

HTML = Path(__file__).resolve().parent.parent / "_build" / "html"
EXTERNAL = re.compile(r"^(https?:)?//", re.I)
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""", re.I)
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)


class _Loads(HTMLParser):
    """Collects the URLs a page loads (not the ones it merely links to)."""

    def __init__(self):
        super().__init__()
        self.urls, self._in_style = [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "embed") and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("href") and set((a.get("rel") or "").lower().split()) & {
                "stylesheet", "preload", "modulepreload", "icon", "shortcut", "prefetch"}:
            self.urls.append(a["href"])
        if a.get("style"):
            self.urls += css_urls(a["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.urls += css_urls(data)


def css_urls(css):
    return CSS_URL.findall(CSS_COMMENT.sub("", css))


def external_loads(html_dir):
    """(file, url) for every external URL a page or stylesheet of ``html_dir`` loads."""
    found = []
    for page in sorted(html_dir.rglob("*.html")):
        parser = _Loads()
        parser.feed(page.read_text(errors="replace"))
        found += [(page.relative_to(html_dir), u) for u in parser.urls if EXTERNAL.match(u)]
    for sheet in sorted(html_dir.rglob("*.css")):
        found += [(sheet.relative_to(html_dir), u) for u in css_urls(sheet.read_text(errors="replace"))
                  if EXTERNAL.match(u)]
    return found


def test_book_is_built():
    assert (HTML / "index.html").exists(), "build the book first (make book)"


def test_no_page_loads_anything_external():
    found = external_loads(HTML)
    assert not found, "external loads:\n" + "\n".join(f"  {f}: {u}" for f, u in found[:20])


def test_math_and_widgets_come_from_the_book():
    pages = [p.read_text() for p in HTML.joinpath("notebooks").glob("*.html")]
    assert any("_static/mathjax/tex-chtml.js" in p for p in pages)
    assert any("_static/jupyter-widgets/embed.js" in p and "application/vnd.jupyter.widget-state+json" in p
               for p in pages)
    assert (HTML / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


def test_the_check_can_fail(tmp_path):
    (tmp_path / "a.html").write_text(
        '<html><head><script src="https://cdn.example/x.js"></script><link rel="stylesheet" '
        'href="//cdn.example/y.css"><link rel="canonical" href="https://example.org/"></head>'
        '<body><style>@font-face { src: url(https://fonts.example/z.woff2) }</style>'
        '<a href="https://example.org">a link is fine</a><script src="_static/local.js"></script></body></html>')
    (tmp_path / "b.css").write_text("/* url(https://commented.example/) */ @import 'https://cdn.example/c.css';")
    assert [u for _, u in external_loads(tmp_path)] == [
        "https://cdn.example/x.js", "//cdn.example/y.css", "https://fonts.example/z.woff2", "https://cdn.example/c.css"]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
