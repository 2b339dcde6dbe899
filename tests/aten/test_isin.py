"""``isin`` (``aten/native/tensor_compare.py``, torch's ``TensorCompare.cpp``) against torch:
PyTorch's OpInfo samples at every dtype torch supports, then each overload (Tensor/Tensor,
Tensor/Scalar, Scalar/Tensor, with ``assume_unique`` and ``invert``) on the cases that decide
the answer: promotion to the common dtype, NaN, signed zeros, both of torch's two ways (few test
elements compared at once, many sorted and searched), empty inputs, ``out=``, and the refusals.
"""
import warnings

import pytest
import torch
from helpers import TORCH_DTYPES, Adapter, assert_same_result_or_error, check_opinfo_samples, opinfo_cases

import internals

ADAPTERS = {"isin": Adapter(internals.isin, kwargs=("assume_unique", "invert"))}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, TORCH_DTYPES))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def _facts(t):
    return t.tolist(), str(t.dtype).split(".")[-1], tuple(t.shape), t.stride()


CASES = {
    "tensor_tensor": lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([2, 3, 9])),
    "invert": lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([2, 3, 9]), invert=True),
    "assume_unique": lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 3]), assume_unique=True),
    "promoted_to_float": lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2.0, 2.5])),
    "rounded_in_float32": lambda lib: lib.isin(lib.tensor([16777217]), lib.tensor([16777216.0])),
    "promoted_to_int64": lambda lib: lib.isin(lib.tensor([1, 255], dtype=lib.uint8), lib.tensor([-1, 1])),
    "nan_and_zeros": lambda lib: lib.isin(lib.tensor([float("nan"), -0.0, 1.0]), lib.tensor([float("nan"), 0.0])),
    "many_test_elements": lambda lib: lib.isin(lib.arange(100), lib.arange(50, 150, 3)),
    "many_floats_inverted": lambda lib: lib.isin(lib.arange(40.0).reshape(4, 10).t(),
                                                 lib.tensor([float("nan"), -0.0, *range(5, 60, 2)]), invert=True),
    "reduced_floats": lambda lib: lib.isin(lib.tensor([1.0, 0.1], dtype=lib.bfloat16),
                                           lib.tensor([1.0, 0.1], dtype=lib.float16)),
    "zero_dim": lambda lib: lib.isin(lib.tensor(2), lib.tensor([2])),
    "test_elements_of_two_dims": lambda lib: lib.isin(lib.tensor([1, 5]), lib.tensor([[1, 2], [3, 4]])),
    "channels_last_output_is_contiguous": lambda lib: lib.isin(
        lib.zeros(1, 2, 2, 2).to(memory_format=lib.channels_last), lib.tensor([0.0])),
    "empty_elements": lambda lib: lib.isin(lib.empty(0, 3), lib.tensor([1.0])),
    "empty_test_elements": lambda lib: lib.isin(lib.tensor([1.0, 2.0]), lib.empty(0)),
    "tensor_scalar": lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2),
    "tensor_scalar_promoted": lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2.5),
    "tensor_scalar_inverted": lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2, invert=True),
    "scalar_tensor": lambda lib: lib.isin(2, lib.tensor([1, 2])),
    "scalar_tensor_promoted": lambda lib: lib.isin(2.5, lib.tensor([1, 2])),
    "scalar_tensor_inverted": lambda lib: lib.isin(2, lib.tensor([1, 2]), invert=True),
    "keywords": lambda lib: (lib.isin(elements=lib.tensor([1, 2]), test_elements=lib.tensor([2])),
                             lib.isin(element=2, test_elements=lib.tensor([2])),
                             lib.isin(elements=lib.tensor([2]), test_element=2)),
    "out": lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([2]), out=lib.empty(0, dtype=lib.bool)),
    "out_scalar": lambda lib: lib.isin(2, lib.tensor([2]), out=lib.empty(3, dtype=lib.bool)),
    "no_gradient": lambda lib: lib.isin(lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([2.0])).requires_grad,
    "bool_refused": lambda lib: lib.isin(lib.tensor([True]), lib.tensor([True])),
    "bool_scalar_refused": lambda lib: lib.isin(lib.tensor([1]), True),
    "complex_refused": lambda lib: lib.isin(lib.tensor([1.0]), lib.tensor([1j])),
    "out_of_another_dtype": lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([2]), out=lib.empty(2)),
    "out_of_another_dtype_scalar": lambda lib: lib.isin(lib.tensor([1, 2]), 2, out=lib.empty(2)),
    "uint16_refused": lambda lib: lib.isin(lib.tensor([1], dtype=lib.uint16), lib.tensor([1], dtype=lib.uint16)),
    "no_method": lambda lib: lib.tensor([1]).isin(lib.tensor([1])),
}


@pytest.mark.parametrize("case", CASES)
def test_isin_as_torch(case):
    def program(lib):
        result = CASES[case](lib)
        return tuple(_facts(r) for r in result) if isinstance(result, tuple) else \
            _facts(result) if hasattr(result, "dtype") else result
    assert_same_result_or_error(program)


def test_two_numbers_are_refused_by_the_binding():
    with pytest.raises(TypeError) as ours:
        internals.isin(2, 3)
    with pytest.raises(TypeError) as theirs:
        torch.isin(2, 3)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("out_shape", [(3,), (), (0,)])
def test_a_number_among_tensors_sizes_its_out_as_torchs_meta_step(out_shape):
    """isin(number, tensor, out=) is structured in torch: its meta step sizes the output [0]
    (so a non-empty out warns of a resize to [0]), then its impl step makes it 0-dim."""
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.isin(2, lib.tensor([1, 2]), out=lib.empty(out_shape, dtype=lib.bool))
        return out.item(), tuple(out.shape), [str(w.message).split(" (Triggered")[0] for w in caught]
    assert run(internals) == run(torch)
