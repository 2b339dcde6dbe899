"""Snippets as readers paste them from PyTorch's tutorials (Tensors, autograd,
"Learning PyTorch with Examples", "What is torch.nn really?", the quickstart) and the code cells of
the seed notes, run with ``import internals as torch``: each prints exactly what torch prints.

``tests/snippets_tutorials.txt`` holds them, one after each ``# --- <id>: <source>`` line. Each runs
twice in this process, with torch and with internals (every ``torch`` in its source read as
``internals``), from the same seed; the two stdouts must be equal character for character once
the package's name is read as torch's and object addresses are masked. An exception a snippet
does not catch is printed as its class and message, and compared too.

Left out (see the round's report): float32 training loops whose losses are sums of 2,000
float32 values (torch's vectorised cascade sum adds in another order than internals' loop: the
printed losses differ in their last digits), and snippets calling what internals lacks
(``linalg.inv``, ``det``, ``avg_pool2d``/``AdaptiveAvgPool2d``, ``nansum``, ``rsqrt``, the
``torch.Tensor(...)`` constructor).
"""
import re
from pathlib import Path

import pytest
import torch
from helpers import ADDRESS, NUMBER, assert_prints_alike  # noqa: F401
from helpers import stdout_of as _stdout

import internals

SNIPPETS = dict(re.findall(r"^# --- (\S+): .*\n((?:(?!# --- ).*\n)*)",
                           Path(__file__).with_name("snippets_tutorials.txt").read_text(), flags=re.M))
# Snippets whose printed last digits follow the CPU (their text is compared with the numbers
# masked, each number within one unit of its last printed digit): the sum of a softmax row,
# 1. or 0.99999994 by the vector path of exp.
CPU_DEPENDENT = {"s2.1"}




def test_the_snippets_are_read():
    assert len(SNIPPETS) == 170 and all("import torch" in s for s in SNIPPETS.values())






@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_prints_what_torch_prints(name):
    if name in CPU_DEPENDENT:
        return assert_prints_alike(SNIPPETS[name])
    expected = _stdout(torch, SNIPPETS[name])
    assert expected.strip(), "the snippet prints something"
    assert _stdout(internals, SNIPPETS[name]) == expected
