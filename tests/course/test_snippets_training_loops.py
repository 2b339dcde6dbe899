"""Everyday snippets as readers paste them from tutorials -- training loops,
``DataLoader``/``TensorDataset``, broadcasting, reductions with ``keepdim``, printing of dtypes and
``grad_fn``, ``einsum``, conv/pool shapes, ``state_dict``, ``no_grad``, ``detach``/``clone``, and the
round's additions (``F.pad``'s reflect/replicate/circular modes and the padding layers, the
``addmm_`` family, ``out=`` that aliases an input, the legacy constructors' errors, ``det``'s
gradient at a singular matrix) -- run with ``import internals as torch``: each prints exactly what
torch prints.

``tests/snippets_training_loops.txt`` holds them, one after each ``# --- <id>: <topic>`` line; they run
as the tutorial snippets do (``helpers.stdout_of``).

Known differences, each checked to still differ (a strict xfail), so that a fix is noticed:
"""
import pytest
from helpers import assert_prints_alike, assert_prints_what_torch_prints, read_snippets, snippet_params

SNIPPETS = read_snippets("snippets_training_loops.txt")
KNOWN_DIFFERENCES = {
}
# A product written into its own input: torch defines no values (BLAS's write order follows the
# library and the CPU), so the printed text is compared with its numbers masked.
UNDEFINED_VALUES = {"r9.26"}
__doc__ += "".join(f"\n* {name}: {why}" for name, why in KNOWN_DIFFERENCES.items())


def test_the_snippets_are_read():
    assert len(SNIPPETS) == 41 and all("import torch" in s for s in SNIPPETS.values())
    assert set(KNOWN_DIFFERENCES) <= set(SNIPPETS)


@pytest.mark.parametrize("name", snippet_params(SNIPPETS, KNOWN_DIFFERENCES))
def test_snippet_prints_what_torch_prints(name):
    if name in UNDEFINED_VALUES:
        return assert_prints_alike(SNIPPETS[name], compare_numbers=False)
    assert_prints_what_torch_prints(SNIPPETS[name])
