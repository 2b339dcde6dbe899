"""Output that fits the book's text column: source listings, error messages and tables.

The rendered book shows ``WIDTH`` characters of an output line, and ``CODE_WIDTH`` of a code
line, at 1400 px before it scrolls sideways (measured in headless Chromium on the built pages:
a 740 px and a 718 px text area, 8.43 px per character of the theme's 14 px monospace font).
``tests/course/test_notebooks_fit.py`` checks every stored line against them. The chapters print through these helpers
instead of ``print``-ing long strings:

- ``show_source(obj)`` shows a function's or class's source, syntax-highlighted (IPython's
  ``Code``, which uses Pygments) in HTML and wrapped to ``WIDTH`` in the plain-text form.
  ``show_source(obj, keep=[...])`` shows a focused excerpt instead: the signature and the
  statements the patterns pick, each with its indented block, the rest folded into ``...`` lines;
  the HTML form keeps the whole function one click away, in a collapsed ``<details>``.
- ``show_error(fn)`` calls ``fn`` and prints the exception it raises: the class, then the message
  wrapped to ``WIDTH``. It returns the exception, so a chapter can compare it with torch's.
- ``table(rows, header)`` lays rows out in columns and shortens (with an ellipsis) only the
  columns that do not fit.
- ``wrap(text)`` wraps a long line of prose or a long list.
- ``show_excerpt(name, pattern)`` shows a few lines of a file the installed torch wheel ships
  (a C++ header under ``torch/include``, torchgen's copy of ``native_functions.yaml``, or
  torchgen's own code generators),
  found by what they say rather than by line number, so the chapter follows the installed
  version; ``wheel_file(name)`` is the file's path.
"""
import importlib.util
import inspect
import os
import re
import textwrap

__all__ = ["WIDTH", "CODE_WIDTH", "wrap", "show_source", "show_error", "table", "Source", "wheel_file",
           "find_excerpt", "show_excerpt", "excerpt_lines"]

#: Characters of a line the book shows at 1400 px without a horizontal scroll bar.
WIDTH = 87
#: Characters of a line of a code cell (its box has wider padding than an output's).
CODE_WIDTH = 85


def wrap(text, width=WIDTH, indent="  "):
    """Wrap each paragraph of ``text`` to ``width``; continuation lines are indented by ``indent``."""
    out = []
    for line in str(text).splitlines() or [""]:
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead + indent,
                                 break_on_hyphens=False, drop_whitespace=True) or [""])
    return "\n".join(out)


def _wrap_code(source, width):
    """Break code lines longer than ``width`` at a space; each break is marked with a trailing
    ``\\`` and the rest is indented one level (a listing to read, not code to run)."""
    out = []
    for line in source.splitlines():
        indent = line[:len(line) - len(line.lstrip())][:width // 2] + "    "
        while len(line) > width:
            cut = line.rfind(" ", len(indent), width - 1)
            if cut <= len(indent):
                cut = width - 2
            out.append(line[:cut] + " \\")
            line = indent + line[cut:].lstrip()
        out.append(line)
    return "\n".join(out) + "\n"


class Source:
    """A source listing: highlighted HTML for the book and Jupyter, wrapped text for plain output."""

    def __init__(self, code, width=WIDTH, language="python"):
        self.code = _wrap_code(textwrap.dedent(code), width)
        self.language = language

    def _repr_html_(self):
        from IPython.display import Code  # IPython is heavy and only a notebook's HTML needs it
        return Code(self.code, language=self.language)._repr_html_()

    def __repr__(self):
        return self.code.rstrip("\n")


class Excerpt(Source):
    """A focused excerpt headed by where it comes from; its HTML form adds the whole source in a
    collapsed ``<details>`` element, so the reader opens it with one click, offline."""

    def __init__(self, code, whole, title, width=WIDTH):
        super().__init__(code, width)
        self.whole = Source(whole, width)
        self.title = title

    def _repr_html_(self):
        n = len(self.whole.code.splitlines())
        return (f"{super()._repr_html_()}<details><summary>the whole of {self.title} "
                f"({n} lines)</summary>{self.whole._repr_html_()}</details>")


def _indent(line):
    return len(line) - len(line.lstrip())


def _statement_end(lines, i):
    """Index after the statement starting at ``lines[i]``: a ``def``/``class`` line keeps only its
    signature; any other keeps its continuation lines and its indented block."""
    if lines[i].lstrip().startswith(("def ", "class ", "async def ")):
        while not lines[i].rstrip().endswith(":"):
            i += 1
        return i + 1
    depth, j = _indent(lines[i]), i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > depth
                              or lines[j].lstrip().startswith((")", "]", "}"))):
        j += 1
    while j > i + 1 and not lines[j - 1].strip():
        j -= 1      # trailing blank lines belong to no statement
    return j


def _enclosing(lines, i):
    """The lines that open the blocks ``lines[i]`` sits in (an ``if``, a ``with``, a ``for``), so a
    kept line is never shown without the condition it runs under."""
    depth = _indent(lines[i])
    for j in range(i - 1, -1, -1):
        if lines[j].strip() and _indent(lines[j]) < depth:
            depth = _indent(lines[j])
            yield j


def excerpt_lines(code, keep):
    """The lines of ``code`` a focused excerpt shows: the first line's statement (the signature),
    and each statement whose first line matches one of the regular expressions ``keep``, with its
    block. Each run of two or more lines left out becomes one ``...`` line at their indentation, so the
    excerpt still reads as the function's outline. Raises ``LookupError`` for a pattern that
    matches no line, so a chapter notices when the source it quotes changes."""
    lines = textwrap.dedent(code).rstrip("\n").splitlines()
    shown = [False] * len(lines)
    for pattern in [None, *keep]:
        starts = [0] if pattern is None else [i for i, line in enumerate(lines) if re.search(pattern, line)]
        if not starts:
            raise LookupError(f"{pattern!r} matches no line of the source")
        for i in starts:
            shown[i:_statement_end(lines, i)] = [True] * (_statement_end(lines, i) - i)
            for j in _enclosing(lines, i):
                shown[j] = True
    for i in range(1, len(lines) - 1):
        if not shown[i] and shown[i - 1] and shown[i + 1]:
            shown[i] = True     # a "..." line would be no shorter than the one line it hides
    out = []
    for i, line in enumerate(lines):
        if shown[i]:
            out.append(line)
        elif i == 0 or shown[i - 1]:
            hidden = next((j for j in range(i, len(lines)) if shown[j]), len(lines)) - i
            first = next((x for x in lines[i:i + hidden] if x.strip()), line)
            indent = " " * _indent(first)
            out.append(f"{indent}...  # {hidden} line{'s' if hidden > 1 else ''}")
    return out


def _where(obj):
    """``src/internals/aten/native/resize.py:25`` for the package's objects, the module's path
    for others: the file a reader opens to see the function in place."""
    module = inspect.getmodule(obj).__name__
    line = inspect.getsourcelines(obj)[1]
    is_package = inspect.getsourcefile(obj).endswith("__init__.py")
    path = module.replace(".", "/") + ("/__init__.py" if is_package else ".py")
    return f"{'src/' if module.split('.')[0] == 'internals' else ''}{path}:{line}"


def show_source(obj, width=WIDTH, keep=None):
    """Display the source of ``obj`` (a function, class, method or module), highlighted and wrapped.

    With ``keep`` (a list of regular expressions; see ``excerpt_lines``), display a focused excerpt
    instead, headed by the file and line it starts at, with the whole source one click away in
    the HTML form. Returns a ``Source`` object: the last expression of a cell, or passed to
    ``display``, it renders as highlighted HTML; ``print`` gives the wrapped text.
    """
    code = obj if isinstance(obj, str) else inspect.getsource(obj)
    if keep is None:
        return Source(code, width)
    head = f"# {_where(obj)}\n"
    title = getattr(obj, "__qualname__", "the function")
    return Excerpt(head + "\n".join(excerpt_lines(code, keep)), head + textwrap.dedent(code), title, width)


def show_error(fn, *args, width=WIDTH, **kwargs):
    """Call ``fn(*args, **kwargs)``, print the exception it raises (class, then wrapped message) and
    return it. Raises ``AssertionError`` if ``fn`` raises nothing: a chapter that shows an error
    must fail when the error goes away."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - any exception is what we show
        print(wrap(f"{type(e).__name__}: {e}", width))
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} raised no exception")


def _shorten(cell, width):
    return cell if len(cell) <= width else cell[:max(width - 1, 1)] + "…"


def table(rows, header=None, width=WIDTH, sep="  "):
    """Return ``rows`` (sequences of values) as aligned text columns no wider than ``width``.

    Numbers are right-aligned, everything else left-aligned. If the columns are too wide the widest
    ones are shortened, with an ellipsis, until the table fits.
    """
    rows = [list(r) for r in rows]
    all_rows = ([list(header)] if header is not None else []) + rows
    ncols = max(len(r) for r in all_rows)
    for r in all_rows:
        r.extend([""] * (ncols - len(r)))
    numeric = [all(isinstance(r[c], (int, float)) and not isinstance(r[c], bool) for r in rows if r[c] != "")
               for c in range(ncols)]
    cells = [[str(v) for v in r] for r in all_rows]
    widths = [max(len(r[c]) for r in cells) for c in range(ncols)]
    while sum(widths) + len(sep) * (ncols - 1) > width and max(widths) > 4:
        widths[widths.index(max(widths))] -= 1
    lines = []
    for i, r in enumerate(cells):
        parts = [_shorten(v, w).rjust(w) if numeric[c] and not (header is not None and i == 0)
                 else _shorten(v, w).ljust(w) for c, (v, w) in enumerate(zip(r, widths))]
        lines.append(sep.join(parts).rstrip())
        if header is not None and i == 0:
            lines.append(sep.join("-" * w for w in widths))
    return "\n".join(lines)


def _wheel_roots():
    """Where the torch wheel keeps the files a chapter quotes: its C++ headers, the package itself,
    torchgen's packaged copy of the op schemas, and torchgen (the code generator) itself; found
    without importing either package."""
    roots = []
    for package, sub in (("torch", "include"), ("torch", ""), ("torchgen", "packaged"), ("torchgen", "")):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            roots.append(os.path.join(spec.submodule_search_locations[0], sub))
    return roots


def _site(path):
    """The folder that holds the torch package a wheel file ``path`` belongs to."""
    return next(os.path.dirname(os.path.dirname(root)) for root in _wheel_roots()
                if path.startswith(os.path.join(root, "")))


def wheel_file(name):
    """The path of ``name`` (``"ATen/ops/add_meta.h"``, ``"ATen/native/native_functions.yaml"``)
    in the installed torch wheel. Raises ``FileNotFoundError`` if the wheel does not ship it."""
    for root in _wheel_roots():
        path = os.path.join(root, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{name} is not in the installed torch wheel")


def find_excerpt(name, pattern, lines=8, until=None, which=0):
    """``(line number, text)`` of an excerpt of the wheel's file ``name``: the first line matching
    the regular expression ``pattern`` (or the match numbered ``which``, as a list index: -1 is
    the last), and the ``lines - 1`` after it, or, with ``until``, the lines up to and including
    the first one after it that matches ``until``."""
    with open(wheel_file(name), encoding="utf-8") as f:
        text = f.read().splitlines()
    matches = [i for i, line in enumerate(text) if re.search(pattern, line)]
    if not matches:
        raise LookupError(f"{pattern!r} is not in {name}")
    start = matches[which]
    if until is None:
        end = start + lines
    else:
        end = next((i + 1 for i in range(start + 1, len(text)) if re.search(until, text[i])), start + lines)
    return start + 1, "\n".join(text[start:end])


def show_excerpt(name, pattern, lines=8, until=None, which=0, width=WIDTH):
    """Display an excerpt of the wheel's file ``name`` (see ``find_excerpt``), headed by where it
    comes from, e.g. ``// torch/include/ATen/ops/add_meta.h:21``; highlighted as C++, or as YAML
    or Python for a ``.yaml`` or ``.py`` file."""
    lineno, text = find_excerpt(name, pattern, lines, until, which)
    language = {".yaml": "yaml", ".py": "python"}.get(os.path.splitext(name)[1], "cpp")
    path = wheel_file(name)
    where = os.path.relpath(path, _site(path))     # torch/include/..., torchgen/packaged/...
    head = f"{'//' if language == 'cpp' else '#'} {where}:{lineno}"
    return Source(f"{head}\n{textwrap.dedent(text)}", width, language=language)
