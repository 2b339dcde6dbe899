"""internals.display: listings, errors and tables that fit the book's column."""
import inspect

import pytest

import internals
from internals.display import WIDTH, excerpt_lines, show_error, show_source, table, wrap


def _lines(text):
    return text.splitlines()


def test_wrap_keeps_short_lines_and_breaks_long_ones():
    assert wrap("short\nlines") == "short\nlines"
    long = "word " * 60
    out = _lines(wrap(long))
    assert len(out) > 1 and all(len(line) <= WIDTH for line in out)
    assert " ".join(line.strip() for line in out) == long.strip()


def test_show_source_wraps_and_highlights():
    src = show_source(internals.promote_types)
    text = repr(src)
    assert text.startswith("def promote_types(a, b):")
    assert all(len(line) <= WIDTH for line in _lines(text))
    html = src._repr_html_()
    assert "<span" in html and "promote_types" in html  # Pygments' token spans


def test_show_source_marks_broken_lines():
    code = "x = " + " + ".join(["1"] * 60) + "\n"
    out = _lines(repr(show_source(code, width=40)))
    assert all(len(line) <= 40 for line in out)
    assert all(line.endswith(" \\") for line in out[:-1]) and not out[-1].endswith("\\")


def test_show_error_prints_class_and_wrapped_message(capsys):
    err = show_error(lambda: internals.zeros(2, 3).view(7))
    torch = pytest.importorskip("torch")
    with pytest.raises(type(err)):
        torch.zeros(2, 3).view(7)
    out = capsys.readouterr().out
    assert out.startswith("RuntimeError: shape '[7]' is invalid for input of size 6")
    assert all(len(line) <= WIDTH for line in _lines(out))


def test_show_error_fails_when_nothing_is_raised():
    with pytest.raises(AssertionError, match="raised no exception"):
        show_error(lambda: None)


def test_table_aligns_and_fits():
    out = _lines(table([["a", 1, 2.5], ["b" * 200, 22, 3]], header=["name", "x", "y"]))
    assert all(len(line) <= WIDTH for line in out)
    assert out[0].startswith("name") and set(out[1]) <= {"-", " "}
    assert out[3].startswith("b") and "…" in out[3]
    assert out[2].endswith(" 1  2.5")  # numbers right-aligned
    assert table([["a", 1]]) == "a  1"


def test_show_source_keep_shows_an_outline_and_the_whole_in_html():
    from internals.aten.native import resize
    src = show_source(resize.set_storage_, keep=[r"_check_set_storage\("])
    lines = _lines(repr(src))
    assert lines[0].startswith("# src/internals/aten/native/resize.py:")
    assert lines[1].startswith("def set_storage_(")
    assert any(line.strip().startswith("_check_set_storage(") for line in lines)
    assert any(line.strip().startswith("...  # ") for line in lines)
    assert len(lines) < len(inspect.getsource(resize.set_storage_).splitlines())
    html = src._repr_html_()
    assert "<details>" in html and "_maybe_resize_storage" in html   # the folded lines, one click away


def test_excerpt_keeps_the_blocks_a_line_sits_in_and_counts_what_it_folds():
    code = ("def f(a):\n    x = 1\n    w = 0\n    if a:\n        y = 2\n        v = 4\n        z = 3\n"
            "    x += 1\n    return x\n")
    assert excerpt_lines(code, [r"z = "]) == [
        "def f(a):", "    ...  # 2 lines", "    if a:", "        ...  # 2 lines", "        z = 3",
        "    ...  # 2 lines"]
    assert excerpt_lines(code, [r"if a"]) == [
        "def f(a):", "    ...  # 2 lines", "    if a:", "        y = 2", "        v = 4", "        z = 3",
        "    ...  # 2 lines"]
    # one line between two kept ones is shown rather than folded
    assert excerpt_lines(code, [r"w = ", r"y = "])[1:4] == ["    x = 1", "    w = 0", "    if a:"]
    with pytest.raises(LookupError):
        excerpt_lines(code, [r"nowhere"])
