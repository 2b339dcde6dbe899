"""Issue 16, round 8: everyday snippets as readers write them -- image batches, indexing tricks,
reductions along dims, printing of many dtypes and shapes (large tensors summarised), return
types, creation functions (the legacy ``torch.Tensor(...)`` too), in-place ops, nn layers, the
round's new operators -- run with ``import internals as torch``: each prints exactly what torch prints.

``tests/snippets_round8.txt`` holds them, one after each ``# --- <id>: <topic>`` line; they run
as round 7's do (``test_snippets_round7._stdout``: same seed, stdout compared character for
character, the package's name read as torch's, addresses masked, uncaught errors printed).

Known differences, each checked to still differ (a strict xfail), so that a fix is noticed:
"""
import re
from pathlib import Path

import pytest
import torch
from test_snippets_round7 import _stdout

import internals


def read_snippets(filename):
    """The snippets of a round's file beside this one, by the id on each ``# --- <id>: <topic>`` line."""
    return dict(re.findall(r"^# --- (\S+): .*\n((?:(?!# --- ).*\n)*)",
                           Path(__file__).with_name(filename).read_text(), flags=re.M))


SNIPPETS = read_snippets("snippets_round8.txt")
KNOWN_DIFFERENCES = {
    # torch's softmax takes exp with SLEEF, internals with the C library: rows differ in their last
    # bits, so a row's sum (now added in torch's order) is 1.0 exactly where torch's is 0.99999988
    "r8.14": "softmax: last-bit differences of exp change how the sums print",
    # torch's inverse solves with MKL's getrs, whose rounding order internals' loop does not follow:
    # the residual ``A.inverse() @ A - I`` has its 4.8e-07 in another place
    "r8.34": "inverse: last-bit differences from MKL's solve order",
}
__doc__ += "".join(f"\n* {name}: {why}" for name, why in KNOWN_DIFFERENCES.items())


def test_the_snippets_are_read():
    assert len(SNIPPETS) == 42 and all("import torch" in s for s in SNIPPETS.values())
    assert set(KNOWN_DIFFERENCES) <= set(SNIPPETS)


def snippet_params(snippets, known_differences):
    """The snippets' names, a known difference as a strict xfail (so that a fix is noticed)."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=known_differences[n]))
            if n in known_differences else n for n in snippets]


def assert_prints_what_torch_prints(source):
    expected = _stdout(torch, source)
    assert expected.strip(), "the snippet prints something"
    assert _stdout(internals, source) == expected


@pytest.mark.parametrize("name", snippet_params(SNIPPETS, KNOWN_DIFFERENCES))
def test_snippet_prints_what_torch_prints(name):
    assert_prints_what_torch_prints(SNIPPETS[name])
