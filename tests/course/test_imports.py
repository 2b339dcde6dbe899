"""Imports sit at the top of a module; one inside a function says why on its line (a real cycle, or
an optional heavy module such as torch, hypothesis or numba.cuda), so the rule stays kept."""
import ast
import io
import pathlib
import tokenize

import pytest

import internals

PACKAGE = pathlib.Path(internals.__file__).parent


def function_level_imports(source):
    """``(line, statement)`` of each import inside a function whose lines carry no comment."""
    inside = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                inside.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(ast.parse(source), False)
    if not inside:      # the comments are read only where they matter: tokenizing takes as long as parsing
        return []
    commented = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                 if tok.type == tokenize.COMMENT}
    return [(node.lineno, ast.unparse(node)) for node in inside
            if not any(line in commented for line in range(node.lineno, node.end_lineno + 1))]


def test_the_check_finds_an_unexplained_import():
    source = "import os\n\ndef f():\n    import sys\n    from . import a  # a real cycle\n    return sys\n"
    assert function_level_imports(source) == [(4, "import sys")]


SOURCES = [pytest.param(p, id=str(p.relative_to(PACKAGE)))
           for p in sorted(PACKAGE.rglob("*.py")) if "_generated" not in p.parts and "generated" not in p.parts]


@pytest.mark.parametrize("path", SOURCES)
def test_function_level_imports_give_a_reason(path):
    assert function_level_imports(path.read_text()) == []
