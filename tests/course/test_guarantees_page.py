"""book/guarantees.md names, after each statement, the test that checks it (``tests/file.py::name``):
every test named there exists, so the page cannot point at a test that was renamed or removed."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "guarantees.md"
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def named_tests(text):
    return REFERENCE.findall(text)


def defined_tests(path):
    tree = ast.parse(path.read_text(), str(path))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")}


def test_the_page_names_tests():
    assert len(named_tests(PAGE.read_text())) >= 30


def test_every_named_test_exists():
    missing = [f"{file}::{name}" for file, name in named_tests(PAGE.read_text())
               if not (ROOT / file).is_file() or name not in defined_tests(ROOT / file)]
    assert missing == []


def test_a_missing_test_is_caught():
    (file, _), = named_tests("Checked by `tests/course/test_guarantees_page.py::test_that_does_not_exist`.")
    assert "test_that_does_not_exist" not in defined_tests(ROOT / file)


def test_the_page_is_in_the_table_of_contents():
    assert "file: book/guarantees" in (ROOT / "_toc.yml").read_text()
