"""The tensor properties and small conversions torch writes in C++ (``is_same_size``,
``ndimension``, ``is_signed``, ``cfloat``, ``cdouble``) against torch: each program's result
described (values, shape, strides, offset, dtype, node, view or not), its warnings and errors.

Tests ``internals.aten.native.tensor_properties`` (aten/src/ATen/native/TensorProperties.cpp).
"""
import pytest
import torch
from helpers import run_described

import internals

X = "lib.arange(12.).reshape(3, 4)"
G = "lib.ones(2, 2, requires_grad=True)"
NUMPY_NAME_PROGRAMS = [
    f"lib.is_same_size({X}, {X}.t())", f"{X}.is_same_size({X} + 1)", f"{X}.cfloat()", f"{X}.cdouble()",
    f"{X}.ndimension()", f"{X}.is_signed()", "lib.ones(2, dtype=lib.uint8).is_signed()",
    "lib.ones(2, dtype=lib.bool).is_signed()",
]


@pytest.mark.parametrize("program", NUMPY_NAME_PROGRAMS)
def test_everyday_calls(program):
    assert run_described(internals, program) == run_described(torch, program)
