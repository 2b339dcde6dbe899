"""``set_printoptions`` against torch: precision, threshold, edgeitems, linewidth, the three
profiles and sci_mode, and the reprs they give.

Tests ``internals._tensor_str`` (torch/_tensor_str.py).
"""

import pytest
import torch

import internals

PRINT_OPTIONS = [dict(precision=2), dict(threshold=5), dict(profile="short"), dict(sci_mode=True),
                 dict(sci_mode=False), dict(profile="full"), dict(linewidth=40, edgeitems=1, threshold=10),
                 dict(precision=6, sci_mode=True), dict(profile="default")]
PRINTED = [lambda lib: lib.tensor([1.23456, 2.34567]), lambda lib: lib.arange(10), lambda lib: lib.arange(2000.0) / 3,
           lambda lib: lib.tensor([1.5, 20.0]), lambda lib: lib.tensor([1e-9, 1e9]), lambda lib: lib.arange(1200),
           lambda lib: lib.arange(100.0).reshape(10, 10), lambda lib: lib.tensor([1.5 + 1j, -2j]),
           lambda lib: lib.tensor([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5], dtype=lib.float64)]


@pytest.mark.parametrize("options", PRINT_OPTIONS, ids=str)
def test_set_printoptions(options):
    """precision, threshold, edgeitems, linewidth, the three profiles and sci_mode, as torch's
    ``set_printoptions`` sets them (sci_mode left out goes back to the formatter's choice)."""
    try:
        internals.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert internals._tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
        for make in PRINTED:
            assert repr(make(internals)) == repr(make(torch)).replace("torch.", "internals.")
    finally:
        internals.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
