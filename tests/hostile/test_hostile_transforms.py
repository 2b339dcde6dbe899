"""Hostile input to the function transforms against torch's: ``vmap`` (``in_dims``, ``out_dims``,
``chunk_size``, ``randomness``, nested levels, in-place operators and views inside), ``grad``,
``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``, ``functionalize`` (both
``remove`` modes), ``stack_module_state`` and modules under ``vmap``; ``autograd.functional``,
``autograd.grad(is_grads_batched=True)`` and ``utils._pytree``; with empty, 0-dim, integer, bool
and complex tensors, mismatched batch sizes, inputs that require grad and those that do not, and
two threads at once. Each program gives torch's result (values within a few ulps of the largest,
shapes, dtypes, strides, whether it requires grad) or raises torch's class (and message)."""

import collections

import pytest
import torch
from helpers import assert_same, assert_within_ulps_of_largest, in_threads, outcome

import internals


def A(lib, *s, dt=None):
    """A tensor of shape ``s`` with distinct values of both signs (ones where ``s`` holds none)."""
    dt = dt or lib.float64
    n = 1
    for v in s:
        n *= v
    return (lib.arange(n, dtype=dt) * 0.37 - 1.1).reshape(s) if n else lib.ones(s, dtype=dt)


def V(lib):
    return lib.func.vmap


def F(lib):
    return lib.func


def AF(lib):
    return lib.autograd.functional


def G(lib):
    return lib.autograd.grad


def P(lib):
    return lib.utils._pytree


NT = collections.namedtuple("NT", "a b")


def _ens(lib):
    lib.manual_seed(0)
    ms = [lib.nn.Linear(3, 2).double() for _ in range(4)]
    p, b = lib.func.stack_module_state(ms)
    base = ms[0]
    x = A(lib, 5, 3)
    return lib.func.vmap(lambda pp, bb: lib.func.functional_call(base, (pp, bb), (x,)))(p, b)


def _ens_bn(lib):
    lib.manual_seed(0)
    ms = [lib.nn.BatchNorm1d(3).double() for _ in range(2)]
    p, b = lib.func.stack_module_state(ms)
    x = A(lib, 5, 3)
    return lib.func.vmap(lambda pp, bb: lib.func.functional_call(ms[0], (pp, bb), (x,)))(p, b)


def _ens_bn_eval(lib):
    lib.manual_seed(0)
    ms = [lib.nn.BatchNorm1d(3).double().eval() for _ in range(2)]
    p, b = lib.func.stack_module_state(ms)
    x = A(lib, 5, 3)
    return lib.func.vmap(lambda pp, bb: lib.func.functional_call(ms[0], (pp, bb), (x,)))(p, b)


def _vm_layer(lib, make, shape):
    lib.manual_seed(0)
    m = make(lib).double()
    return lib.func.vmap(m)(A(lib, *shape))


def _try(f):
    try:
        f()
    except Exception:
        pass
    return True


# vmap: in_dims/out_dims/chunk_size, randomness, nested levels, in-place ops and views, odd dtypes
VMAP = {
    "in_dims_list_top": lambda lib: V(lib)(lambda a, b: a + b, in_dims=[0, 0])(A(lib, 2, 3), A(lib, 2, 3)),
    "in_dims_none_all": lambda lib: V(lib)(lambda a: a, in_dims=None)(A(lib, 2)),
    "in_dims_tuple_none_all": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(None, None))(A(lib, 2), A(lib, 2)),
    "in_dims_wrong_len": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(0,))(A(lib, 2), A(lib, 2)),
    "in_dims_too_long": lambda lib: V(lib)(lambda a: a, in_dims=(0, 0))(A(lib, 2)),
    "in_dims_out_of_range": lambda lib: V(lib)(lambda a: a, in_dims=2)(A(lib, 2, 3)),
    "in_dims_neg_out_of_range": lambda lib: V(lib)(lambda a: a, in_dims=-3)(A(lib, 2, 3)),
    "in_dims_for_nontensor": lambda lib: V(lib)(lambda a, k: a * k, in_dims=(0, 0))(A(lib, 2), 3.0),
    "nontensor_none": lambda lib: V(lib)(lambda a, k: a * k, in_dims=(0, None))(A(lib, 2), 3.0),
    "nontensor_default0": lambda lib: V(lib)(lambda a, k: a * k)(A(lib, 2), 3.0),
    "nontensor_str_arg": lambda lib: V(lib)(lambda a, k: a * len(k), in_dims=(0, None))(A(lib, 2), "abc"),
    "mismatched_batch": lambda lib: V(lib)(lambda a, b: a + b)(A(lib, 2, 3), A(lib, 3, 3)),
    "mismatched_batch_in_dim1": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(0, 1))(A(lib, 2, 3), A(lib, 2, 3)),
    "in_dim1_match": lambda lib: V(lib)(lambda a, b: a * b, in_dims=(1, 0))(A(lib, 3, 2), A(lib, 2, 3)),
    "out_dims_tuple_match": lambda lib: V(lib)(lambda a: (a, a * 2), out_dims=(0, 1))(A(lib, 2, 3)),
    "out_dims_tuple_wrong_len": lambda lib: V(lib)(lambda a: (a, a * 2), out_dims=(0, 1, 0))(A(lib, 2, 3)),
    "out_dims_tuple_single_output": lambda lib: V(lib)(lambda a: a, out_dims=(1,))(A(lib, 2, 3)),
    "out_dims_list": lambda lib: V(lib)(lambda a: [a, a], out_dims=[0, 1])(A(lib, 2, 3)),
    "out_dims_neg2": lambda lib: V(lib)(lambda a: a * 1, out_dims=-2)(A(lib, 2, 3, 4)),
    "out_dims_float": lambda lib: V(lib)(lambda a: a, out_dims=1.0)(A(lib, 2, 3)),
    "out_dims_bool": lambda lib: V(lib)(lambda a: a, out_dims=True)(A(lib, 2, 3)),
    "out_dims_none_batched": lambda lib: V(lib)(lambda a: a, out_dims=None)(A(lib, 2, 3)),
    "out_dims_none_unbatched": lambda lib: V(lib)(lambda a: lib.ones(2), out_dims=None)(A(lib, 2, 3)),
    "out_dims_none_int": lambda lib: V(lib)(lambda a: 3, out_dims=None)(A(lib, 2, 3)),
    "out_int_output": lambda lib: V(lib)(lambda a: 3)(A(lib, 2, 3)),
    "out_str_output": lambda lib: V(lib)(lambda a: "x")(A(lib, 2, 3)),
    "out_nested_dict": lambda lib: V(lib)(lambda a: {"x": (a, [a + 1])}, out_dims={"x": (1, [0])})(A(lib, 2, 3)),
    "out_unbatched_expand_stride": lambda lib: V(lib)(lambda a: lib.ones(3, dtype=lib.float64), out_dims=1)(
        A(lib, 2, 3)
    ),
    "out_returns_input": lambda lib: V(lib)(lambda a: a)(A(lib, 2, 3)),
    "out_returns_input_indim1": lambda lib: V(lib)(lambda a: a, in_dims=1)(A(lib, 2, 3)),
    "out_returns_input_indim1_outdim1": lambda lib: V(lib)(lambda a: a, in_dims=1, out_dims=1)(A(lib, 2, 3)),
    "out_zero_dim_out_dims1": lambda lib: V(lib)(lambda a: a.sum(), out_dims=1)(A(lib, 2, 3)),
    "out_zero_dim_out_dims_neg1": lambda lib: V(lib)(lambda a: a.sum(), out_dims=-1)(A(lib, 2, 3)),
    "out_returns_captured": lambda lib: (lambda c: V(lib)(lambda a: c)(A(lib, 2, 3)))(A(lib, 3)),
    "no_inputs": lambda lib: V(lib)(lambda: 1)(),
    "only_kwargs": lambda lib: V(lib)(lambda a=None: a)(a=A(lib, 2)),
    "kwarg_tensor_not_batched": lambda lib: V(lib)(lambda a, b=None: a + b)(A(lib, 2, 3), b=A(lib, 3)),
    "kwarg_tensor_batched_shape": lambda lib: V(lib)(lambda a, b=None: a + b)(A(lib, 2, 3), b=A(lib, 2, 3)),
    "empty_tuple_arg": lambda lib: V(lib)(lambda a, t: a)(A(lib, 2), ()),
    "none_arg": lambda lib: V(lib)(lambda a, t: a * 2)(A(lib, 2), None),
    "dict_in_dims_partial": lambda lib: V(lib)(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))(
        {"a": A(lib, 2, 3), "b": A(lib, 3)}
    ),
    "in_dims_dict_top": lambda lib: V(lib)(lambda d: d["a"], in_dims={"a": 0})({"a": A(lib, 2)}),
    "in_dims_list_for_tuple": lambda lib: V(lib)(lambda t: t[0] + t[1], in_dims=([0, 0],))((A(lib, 2), A(lib, 2))),
    "in_dims_tuple_for_list": lambda lib: V(lib)(lambda t: t[0] + t[1], in_dims=((0, 0),))([A(lib, 2), A(lib, 2)]),
    "namedtuple_in": lambda lib: V(lib)(lambda r: r.values * 2)(A(lib, 2, 3).max(1)),
    "namedtuple_out": lambda lib: type(V(lib)(lambda a: a.max(0))(A(lib, 2, 3))).__name__,
    "namedtuple_out_vals": lambda lib: tuple(V(lib)(lambda a: a.max(0))(A(lib, 2, 3))),
    "zero_dim_tensor_in_dims_none": lambda lib: V(lib)(lambda a, s: a * s, in_dims=(0, None))(
        A(lib, 2, 3), lib.tensor(2.0)
    ),
    "batch_size_one": lambda lib: V(lib)(lambda a: a.sum(0))(A(lib, 1, 3)),
    "batch_size_zero_pointwise_tuple": lambda lib: V(lib)(lambda a, b: (a + b, a * b))(A(lib, 0, 3), A(lib, 0, 3)),
    "batch_zero_mm": lambda lib: V(lib)(lambda a: a @ A(lib, 3, 2))(A(lib, 0, 3)),
    "batch_zero_sum_dim": lambda lib: V(lib)(lambda a: a.sum(0))(A(lib, 0, 3, 2)),
    "empty_example": lambda lib: V(lib)(lambda a: a.sum())(A(lib, 3, 0)),
    "empty_example_max": lambda lib: V(lib)(lambda a: a.max())(A(lib, 3, 0)),
    "empty_example_mean": lambda lib: V(lib)(lambda a: a.mean())(A(lib, 3, 0)),
    "int_tensor_div": lambda lib: V(lib)(lambda a: a / 2)(A(lib, 2, 3, dt=lib.int64)),
    "int_tensor_floordiv": lambda lib: V(lib)(lambda a: a // 2)(A(lib, 2, 3, dt=lib.int64)),
    "bool_tensor_sum": lambda lib: V(lib)(lambda a: a.sum())(A(lib, 2, 3) > 0),
    "bool_tensor_logical": lambda lib: V(lib)(lambda a: ~a)(A(lib, 2, 3) > 0),
    "bool_mask_where": lambda lib: V(lib)(lambda a, m: lib.where(m, a, 0.0))(A(lib, 2, 3), A(lib, 2, 3) > 0),
    "complex_mul": lambda lib: V(lib)(lambda a: a * a.conj())(lib.complex(A(lib, 2, 3), A(lib, 2, 3) + 1)),
    "complex_abs": lambda lib: V(lib)(lambda a: a.abs())(lib.complex(A(lib, 2, 3), A(lib, 2, 3) + 1)),
    "complex_real_view": lambda lib: V(lib)(lambda a: a.real * 2)(lib.complex(A(lib, 2, 3), A(lib, 2, 3) + 1)),
    "float32_promote_with_f64_unbatched": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(0, None))(
        A(lib, 2, 3, dt=lib.float32), A(lib, 3)
    ),
    "int_plus_float_unbatched_0dim": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(0, None))(
        A(lib, 2, 3, dt=lib.int64), lib.tensor(1.5)
    ),
    "batched_0dim_plus_1d": lambda lib: V(lib)(lambda s, b: s + b, in_dims=(0, None))(
        A(lib, 3, dt=lib.float32), A(lib, 4)
    ),
    "batched_0dim_int_plus_float_1d": lambda lib: V(lib)(lambda s, b: s + b, in_dims=(0, None))(
        A(lib, 3, dt=lib.int64), A(lib, 4, dt=lib.float32)
    ),
    "promotion_batched_0dim_vs_tensor": lambda lib: V(lib)(lambda s, b: s * b)(
        A(lib, 3, dt=lib.float64), A(lib, 3, 4, dt=lib.float32)
    ),
    "python_scalar_promotion": lambda lib: V(lib)(lambda a: a * 2.5)(A(lib, 2, 3, dt=lib.int32)),
    "chunk_size_0": lambda lib: V(lib)(lambda a: a, chunk_size=0)(A(lib, 2)),
    "chunk_size_neg": lambda lib: V(lib)(lambda a: a, chunk_size=-1)(A(lib, 2)),
    "chunk_size_float": lambda lib: V(lib)(lambda a: a, chunk_size=1.0)(A(lib, 2)),
    "chunk_size_bool": lambda lib: V(lib)(lambda a: a * 1, chunk_size=True)(A(lib, 2)),
    "chunk_size_2_of_5": lambda lib: V(lib)(lambda a: a * 2, chunk_size=2)(A(lib, 5, 3)),
    "chunk_size_2_outdim1": lambda lib: V(lib)(lambda a: a * 2, chunk_size=2, out_dims=1)(A(lib, 5, 3)),
    "chunk_size_in_dim1": lambda lib: V(lib)(lambda a: a.sum(), chunk_size=2, in_dims=1)(A(lib, 3, 5)),
    "chunk_size_unbatched_out": lambda lib: V(lib)(lambda a: lib.ones(2, dtype=lib.float64), chunk_size=2)(
        A(lib, 5, 3)
    ),
    "chunk_size_dict_out": lambda lib: V(lib)(lambda a: {"s": a.sum()}, chunk_size=2)(A(lib, 5, 3)),
    "chunk_size_bad_out_dims": lambda lib: V(lib)(lambda a: a, chunk_size=2, out_dims=5)(A(lib, 5, 3)),
    "chunk_size_ok_bad_out_dims_struct": lambda lib: V(lib)(lambda a: a, chunk_size=2, out_dims=(0, 0))(A(lib, 5, 3)),
    "chunk_size_stride": lambda lib: V(lib)(lambda a: a.t(), chunk_size=2)(A(lib, 5, 3, 2)),
    "rand_error": lambda lib: V(lib)(lambda a: a + lib.rand(3))(A(lib, 2, 3)),
    "rand_bad_mode": lambda lib: V(lib)(lambda a: a, randomness="foo")(A(lib, 2, 3)),
    "rand_like_error": lambda lib: V(lib)(lambda a: lib.rand_like(a))(A(lib, 2, 3)),
    "dropout_error": lambda lib: V(lib)(lambda a: lib.nn.functional.dropout(a, 0.5))(A(lib, 2, 3)),
    "dropout_eval_error": lambda lib: V(lib)(lambda a: lib.nn.functional.dropout(a, 0.5, training=False))(A(lib, 2, 3)),
    "dropout_p0_error": lambda lib: V(lib)(lambda a: lib.nn.functional.dropout(a, 0.0))(A(lib, 2, 3)),
    "dropout_p1_different": lambda lib: V(lib)(lambda a: lib.nn.functional.dropout(a, 1.0), randomness="different")(
        A(lib, 2, 3)
    ),
    "randn_shape_different": lambda lib: V(lib)(
        lambda a: lib.randn(4, dtype=lib.float64) * 0 + a.sum(), randomness="different"
    )(A(lib, 2, 3)),
    "randn_shape_same": lambda lib: V(lib)(lambda a: lib.randn(4) * 0, randomness="same")(A(lib, 2, 3)),
    "randint_different": lambda lib: V(lib)(lambda a: lib.randint(0, 1, (3,)), randomness="different")(A(lib, 2, 3)),
    "randint_same": lambda lib: V(lib)(lambda a: lib.randint(0, 1, (3,)), randomness="same")(A(lib, 2, 3)),
    "randperm_different": lambda lib: V(lib)(lambda a: lib.randperm(1), randomness="different")(A(lib, 2, 3)),
    "randperm_same": lambda lib: V(lib)(lambda a: lib.randperm(1), randomness="same")(A(lib, 2, 3)),
    "normal_batched_mean_same": lambda lib: V(lib)(lambda m: lib.normal(m, 0.0), randomness="same")(A(lib, 2, 3)),
    "normal_batched_mean_different": lambda lib: V(lib)(lambda m: lib.normal(m, 0.0), randomness="different")(
        A(lib, 2, 3)
    ),
    "bernoulli_p0_different": lambda lib: V(lib)(lambda p: lib.bernoulli(p * 0), randomness="different")(A(lib, 2, 3)),
    "bernoulli_p0_same": lambda lib: V(lib)(lambda p: lib.bernoulli(p * 0), randomness="same")(A(lib, 2, 3)),
    "uniform_inplace_error": lambda lib: V(lib)(lambda a: a.clone().uniform_())(A(lib, 2, 3)),
    "uniform_inplace_same_shape": lambda lib: V(lib)(lambda a: a.clone().uniform_(1, 1))(A(lib, 2, 3)),
    "rand_same_then_grad": lambda lib: V(lib)(lambda a: lib.rand(3) * 0 + a, randomness="same")(A(lib, 2, 3)),
    "rand_like_unbatched_same": lambda lib: V(lib)(lambda a: lib.rand_like(lib.ones(3)) * 0 + a, randomness="same")(
        A(lib, 2, 3)
    ),
    "rand_with_generator_different": lambda lib: V(lib)(
        lambda a: lib.rand(3, generator=lib.Generator().manual_seed(0)) * 0, randomness="different"
    )(A(lib, 2, 3)),
    "randomness_none": lambda lib: V(lib)(lambda a: a, randomness=None)(A(lib, 2, 3)),
    "nested_three": lambda lib: V(lib)(V(lib)(V(lib)(lambda a: a * 2)))(A(lib, 2, 3, 4)),
    "nested_inner_in_dims_none": lambda lib: V(lib)(lambda x: V(lib)(lambda y: x * y)(A(lib, 4)))(A(lib, 3)),
    "nested_outer_dim_inner_dim1": lambda lib: V(lib)(V(lib)(lambda a: a.sum(), in_dims=1), in_dims=2)(A(lib, 2, 3, 4)),
    "nested_out_dims": lambda lib: V(lib)(V(lib)(lambda a: a * 1, out_dims=1), out_dims=2)(A(lib, 2, 3, 4)),
    "nested_mismatched_inner": lambda lib: V(lib)(lambda x, y: V(lib)(lambda a, b: a + b)(x, y))(
        A(lib, 2, 3), A(lib, 2, 4)
    ),
    "nested_matmul": lambda lib: V(lib)(V(lib)(lambda a, b: a @ b))(A(lib, 2, 3, 4, 5), A(lib, 2, 3, 5, 2)),
    "nested_inner_returns_outer": lambda lib: V(lib)(lambda x: V(lib)(lambda y: x)(A(lib, 4)))(A(lib, 3, 2)),
    "nested_inner_out_none_outer_batched": lambda lib: V(lib)(lambda x: V(lib)(lambda y: x, out_dims=None)(A(lib, 4)))(
        A(lib, 3, 2)
    ),
    "nested_random_different": lambda lib: V(lib)(
        V(lib)(lambda a: lib.rand(2).shape, randomness="different", out_dims=None), out_dims=None
    )(A(lib, 2, 3)),
    "nested_reduction_keepdim": lambda lib: V(lib)(V(lib)(lambda a: a.sum(-1, keepdim=True)))(A(lib, 2, 3, 4)),
    "nested_cat_mixed_levels": lambda lib: V(lib)(lambda x: V(lib)(lambda y: lib.cat([x, y]))(A(lib, 4, 2)))(
        A(lib, 3, 2)
    ),
    "nested_stack_mixed_levels": lambda lib: V(lib)(lambda x: V(lib)(lambda y: lib.stack([x, y]))(A(lib, 4, 2)))(
        A(lib, 3, 2)
    ),
    "nested_index_mixed": lambda lib: V(lib)(lambda x: V(lib)(lambda i: x[i])(lib.tensor([0, 1, 1])))(A(lib, 3, 2)),
    "nested_inplace_outer_into_inner": lambda lib: V(lib)(lambda x: V(lib)(lambda y: y.clone().add_(x))(A(lib, 4, 2)))(
        A(lib, 3, 2)
    ),
    "nested_inplace_inner_into_outer": lambda lib: V(lib)(lambda x: V(lib)(lambda y: x.clone().add_(y))(A(lib, 4, 2)))(
        A(lib, 3, 2)
    ),
    "inplace_unbatched_self_error": lambda lib: V(lib)(lambda a: A(lib, 3).add_(a))(A(lib, 2, 3)),
    "inplace_unbatched_self_mul_": lambda lib: V(lib)(lambda a: A(lib, 3).mul_(a))(A(lib, 2, 3)),
    "inplace_unbatched_copy_": lambda lib: V(lib)(lambda a: lib.zeros(3, dtype=lib.float64).copy_(a))(A(lib, 2, 3)),
    "inplace_batched_copy_unbatched": lambda lib: V(lib)(lambda a: a.clone().copy_(A(lib, 3)))(A(lib, 2, 3)),
    "inplace_fill_tensor_batched": lambda lib: V(lib)(lambda a, v: a.clone().fill_(v))(A(lib, 2, 3), A(lib, 2)),
    "inplace_zero_": lambda lib: V(lib)(lambda a: a.clone().zero_())(A(lib, 2, 3)),
    "inplace_into_input_indim1": lambda lib: (lambda x: (V(lib)(lambda a: a.mul_(2), in_dims=1)(x), x)[1])(
        A(lib, 2, 3)
    ),
    "inplace_view_write_through": lambda lib: (lambda x: (V(lib)(lambda a: a[0].fill_(7))(x), x)[1])(A(lib, 2, 3)),
    "inplace_setitem": lambda lib: (
        lambda x: (
            V(lib)(lambda a: a.__setitem__(1, 5.0))(x) if False else V(lib)(lambda a: (a.__setitem__(1, 5.0), a)[1])(x),
            x,
        )[1]
    )(A(lib, 2, 3)),
    "inplace_setitem_tensor_value": lambda lib: V(lib)(lambda a, v: (a.__setitem__(slice(0, 2), v), a)[1])(
        A(lib, 2, 3), A(lib, 2)
    ),
    "inplace_setitem_unbatched_target": lambda lib: V(lib)(
        lambda v: (lambda t: (t.__setitem__(0, v), t)[1])(lib.zeros(3, dtype=lib.float64))
    )(A(lib, 2)),
    "inplace_masked_fill_": lambda lib: V(lib)(lambda a: a.clone().masked_fill_(a > 0, 0.0))(A(lib, 2, 3)),
    "inplace_clamp_": lambda lib: V(lib)(lambda a: a.clone().clamp_(0, 1))(A(lib, 2, 3)),
    "inplace_t_": lambda lib: V(lib)(lambda a: a.clone().t_())(A(lib, 2, 3, 4)),
    "inplace_transpose_": lambda lib: V(lib)(lambda a: a.clone().transpose_(0, 1))(A(lib, 2, 3, 4)),
    "inplace_unsqueeze_": lambda lib: V(lib)(lambda a: a.clone().unsqueeze_(0))(A(lib, 2, 3)),
    "inplace_squeeze_": lambda lib: V(lib)(lambda a: a.clone().squeeze_())(A(lib, 2, 1, 3)),
    "inplace_resize_": lambda lib: V(lib)(lambda a: a.clone().resize_(3))(A(lib, 2, 3)),
    "inplace_index_add_": lambda lib: V(lib)(lambda a: a.clone().index_add_(0, lib.tensor([0, 0]), a[:2]))(
        A(lib, 2, 3)
    ),
    "inplace_scatter_": lambda lib: V(lib)(lambda a: a.clone().scatter_(0, lib.tensor([2, 0]), a[:2]))(A(lib, 2, 3)),
    "inplace_addmm_": lambda lib: V(lib)(lambda a: a.clone().addmm_(a, a))(A(lib, 2, 3, 3)),
    "view_contiguous_stride": lambda lib: V(lib)(lambda a: a.contiguous())(A(lib, 3, 2).t()),
    "view_view_of_noncontig": lambda lib: V(lib)(lambda a: a.view(-1))(A(lib, 2, 3).t()),
    "view_reshape_noncontig": lambda lib: V(lib)(lambda a: a.reshape(-1))(A(lib, 3, 2).t()),
    "view_expand_then_add": lambda lib: V(lib)(lambda a: a.expand(4, 3))(A(lib, 2, 1, 3)),
    "view_expand_as": lambda lib: V(lib)(lambda a, b: a.expand_as(b))(A(lib, 2, 1, 3), A(lib, 2, 4, 3)),
    "view_unfold": lambda lib: V(lib)(lambda a: a.unfold(0, 2, 1))(A(lib, 2, 5)),
    "view_as_strided": lambda lib: V(lib)(lambda a: a.as_strided((2, 2), (1, 2)))(A(lib, 2, 5)),
    "view_narrow_neg": lambda lib: V(lib)(lambda a: a.narrow(-1, 1, 2))(A(lib, 2, 3, 4)),
    "view_select_neg": lambda lib: V(lib)(lambda a: a.select(-1, -1))(A(lib, 2, 3, 4)),
    "view_slice_step": lambda lib: V(lib)(lambda a: a[::2])(A(lib, 2, 5)),
    "view_ellipsis_none": lambda lib: V(lib)(lambda a: a[..., None, 1])(A(lib, 2, 3, 4)),
    "view_split_sizes": lambda lib: V(lib)(lambda a: a.split([1, 2], 0))(A(lib, 2, 3)),
    "view_chunk": lambda lib: V(lib)(lambda a: a.chunk(2, -1))(A(lib, 2, 3, 4)),
    "view_diag_embed": lambda lib: V(lib)(lambda a: lib.diag_embed(a))(A(lib, 2, 3)),
    "view_tril": lambda lib: V(lib)(lambda a: a.tril())(A(lib, 2, 3, 3)),
    "view_real_imag": lambda lib: V(lib)(lambda a: lib.view_as_real(a))(lib.complex(A(lib, 2, 3), A(lib, 2, 3))),
    "view_select_out_of_range": lambda lib: V(lib)(lambda a: a[5])(A(lib, 2, 3)),
    "view_bad_reshape": lambda lib: V(lib)(lambda a: a.view(4))(A(lib, 2, 3)),
    "view_transpose_bad_dim": lambda lib: V(lib)(lambda a: a.transpose(0, 2))(A(lib, 2, 3, 4)),
    "view_sum_bad_dim": lambda lib: V(lib)(lambda a: a.sum(2))(A(lib, 2, 3, 4)),
    "view_flatten_0d": lambda lib: V(lib)(lambda a: a.flatten())(A(lib, 3)),
    "view_unsqueeze_neg": lambda lib: V(lib)(lambda a: a.unsqueeze(-1))(A(lib, 2, 3)),
    "view_movedim_tuple": lambda lib: V(lib)(lambda a: a.movedim((0, 1), (1, 0)))(A(lib, 2, 3, 4)),
    "size_call": lambda lib: V(lib)(
        lambda a: a * a.size(0),
    )(A(lib, 2, 3)),
    "shape_neg": lambda lib: V(lib)(lambda a: a * a.shape[-1])(A(lib, 2, 3)),
    "dim_call": lambda lib: V(lib)(lambda a: a * a.dim())(A(lib, 2, 3, 4)),
    "numel_call": lambda lib: V(lib)(lambda a: a * a.numel())(A(lib, 2, 3, 4)),
    "item_error": lambda lib: V(lib)(lambda a: a.sum().item())(A(lib, 2, 3)),
    "bool_error": lambda lib: V(lib)(lambda a: bool(a.sum() > 0))(A(lib, 2, 3)),
    "tolist_error": lambda lib: V(lib)(lambda a: a.tolist())(A(lib, 2, 3)),
    "nonzero_error": lambda lib: V(lib)(lambda a: a.nonzero())(A(lib, 2, 3)),
    "masked_select_error": lambda lib: V(lib)(lambda a: a[a > 0])(A(lib, 2, 3)),
    "float_call_error": lambda lib: V(lib)(lambda a: float(a.sum()))(A(lib, 2, 3)),
    "is_contiguous": lambda lib: V(lib)(lambda a: a * a.is_contiguous(), in_dims=1)(A(lib, 2, 3)),
    "stride_call": lambda lib: V(lib)(lambda a: a * a.stride(0), in_dims=1)(A(lib, 2, 3, 4)),
    "requires_grad_inside": lambda lib: V(lib)(lambda a: a * a.requires_grad)(A(lib, 2, 3).requires_grad_()),
    "grad_through_vmap_out": lambda lib: (lambda x: lib.autograd.grad(V(lib)(lambda a: a.sin().sum())(x).sum(), x))(
        A(lib, 2, 3).requires_grad_()
    ),
    "grad_through_vmap_in_dim1": lambda lib: (
        lambda x: lib.autograd.grad((V(lib)(lambda a: a * a, in_dims=1)(x) * A(lib, 3, 2)).sum(), x)
    )(A(lib, 2, 3).requires_grad_()),
    "grad_fn_name_vmap_out": lambda lib: V(lib)(lambda a: a.sin())(A(lib, 2, 3).requires_grad_()).grad_fn.name(),
    "vmap_out_requires_grad": lambda lib: V(lib)(lambda a: a * 2)(A(lib, 2, 3).requires_grad_()).requires_grad,
    "vmap_no_grad_inside": lambda lib: V(lib)(lambda a: lib.no_grad()(lambda: a * 2)())(A(lib, 2, 3).requires_grad_()),
    "vmap_mixed_requires_grad": lambda lib: V(lib)(lambda a, b: a * b)(A(lib, 2, 3).requires_grad_(), A(lib, 2, 3)),
    "int_dtype_arange_like": lambda lib: V(lib)(lambda a: a + lib.arange(3))(A(lib, 2, 3, dt=lib.int32)),
    "new_ones_inside": lambda lib: V(lib)(lambda a: a.new_ones(2))(A(lib, 2, 3)),
    "new_tensor_inside": lambda lib: V(lib)(lambda a: a + a.new_tensor([1.0, 2.0, 3.0]))(A(lib, 2, 3)),
    "zeros_like_inside": lambda lib: V(lib)(lambda a: lib.zeros_like(a))(A(lib, 2, 3).t()),
    "full_like_inside": lambda lib: V(lib)(lambda a: lib.full_like(a, 3))(A(lib, 2, 3, dt=lib.int64)),
    "to_dtype_inside": lambda lib: V(lib)(lambda a: a.to(lib.float32))(A(lib, 2, 3)),
    "type_as_inside": lambda lib: V(lib)(lambda a, b: a.type_as(b))(A(lib, 2, 3), A(lib, 2, 3, dt=lib.int32)),
    "dtype_attr": lambda lib: V(lib)(lambda a: a.dtype, out_dims=None)(A(lib, 2, 3)),
    "isinstance_tensor": lambda lib: V(lib)(lambda a: isinstance(a, lib.Tensor), out_dims=None)(A(lib, 2, 3)),
    "repr_inside_no_crash": lambda lib: V(lib)(lambda a: (a * 1, len(repr(a)) > 0), out_dims=(0, None))(A(lib, 2, 3))[
        1
    ],
    "outer": lambda lib: V(lib)(lambda a, b: lib.outer(a, b))(A(lib, 2, 3), A(lib, 2, 4)),
    "einsum": lambda lib: V(lib)(lambda a, b: lib.einsum("ij,j->i", a, b))(A(lib, 2, 3, 4), A(lib, 2, 4)),
    "tensordot": lambda lib: V(lib)(lambda a, b: lib.tensordot(a, b, 1))(A(lib, 2, 3, 4), A(lib, 2, 4)),
    "norm": lambda lib: V(lib)(lambda a: a.norm())(A(lib, 2, 3)),
    "std_unbiased_false": lambda lib: V(lib)(lambda a: a.std(unbiased=False))(A(lib, 2, 3)),
    "cumsum_dtype": lambda lib: V(lib)(lambda a: a.cumsum(0, dtype=lib.float32))(A(lib, 2, 3, dt=lib.int64)),
    "argsort_desc": lambda lib: V(lib)(lambda a: a.argsort(descending=True))(A(lib, 2, 3)),
    "topk_largest_false": lambda lib: V(lib)(lambda a: a.topk(2, largest=False))(A(lib, 2, 3)),
    "pad": lambda lib: V(lib)(lambda a: lib.nn.functional.pad(a, (1, 2)))(A(lib, 2, 3)),
    "repeat": lambda lib: V(lib)(lambda a: a.repeat(2, 1))(A(lib, 2, 3)),
    "tile": lambda lib: V(lib)(lambda a: a.tile(2))(A(lib, 2, 3)),
    "index_put_accumulate": lambda lib: V(lib)(lambda a, v: a.index_put((lib.tensor([0, 0]),), v, accumulate=True))(
        A(lib, 2, 3), A(lib, 2, 2)
    ),
    "searchsorted": lambda lib: V(lib)(lambda a: lib.searchsorted(a, lib.tensor([0.0, 1.0], dtype=lib.float64)))(
        A(lib, 2, 3)
    ),
    "clamp_tensor_bounds": lambda lib: V(lib)(lambda a, lo: a.clamp(min=lo))(A(lib, 2, 3), A(lib, 2, 1)),
    "pow_scalar_base": lambda lib: V(lib)(lambda a: 2**a)(A(lib, 2, 3)),
    "rsub_scalar": lambda lib: V(lib)(lambda a: 1 - a)(A(lib, 2, 3)),
    "matmul_1d_1d": lambda lib: V(lib)(lambda a, b: a @ b)(A(lib, 2, 3), A(lib, 2, 3)),
    "matmul_1d_2d": lambda lib: V(lib)(lambda a, b: a @ b, in_dims=(0, None))(A(lib, 2, 3), A(lib, 3, 4)),
    "matmul_shape_error": lambda lib: V(lib)(lambda a, b: a @ b, in_dims=(0, None))(A(lib, 2, 3), A(lib, 4, 4)),
    "add_shape_error": lambda lib: V(lib)(lambda a, b: a + b, in_dims=(0, None))(A(lib, 2, 3), A(lib, 4)),
    "cat_dim_error": lambda lib: V(lib)(lambda a, b: lib.cat([a, b], 1))(A(lib, 2, 3), A(lib, 2, 3)),
    "stack_size_mismatch": lambda lib: V(lib)(lambda a, b: lib.stack([a, b]))(A(lib, 2, 3), A(lib, 2, 4)),
    "softmax_int_error": lambda lib: V(lib)(lambda a: a.softmax(0))(A(lib, 2, 3, dt=lib.int64)),
    "mean_int_error": lambda lib: V(lib)(lambda a: a.mean())(A(lib, 2, 3, dt=lib.int64)),
}


# grad, vjp, jvp, linearize, jacrev, jacfwd, hessian, functionalize, stack_module_state
TRANSFORMS = {
    "grad_argnums_empty_tuple": lambda lib: F(lib).grad(lambda a: a.sum(), argnums=())(A(lib, 3)),
    "grad_argnums_dup": lambda lib: F(lib).grad(lambda a, b: (a * b).sum(), argnums=(0, 0))(A(lib, 3), A(lib, 3)),
    "grad_argnums_dup_neg": lambda lib: F(lib).grad(lambda a, b: (a * b).sum(), argnums=(0, -2))(A(lib, 3), A(lib, 3)),
    "grad_argnums_out_of_range": lambda lib: F(lib).grad(lambda a: a.sum(), argnums=1)(A(lib, 3)),
    "grad_argnums_list": lambda lib: F(lib).grad(lambda a, b: (a * b).sum(), argnums=[0, 1])(A(lib, 3), A(lib, 3)),
    "grad_argnums_float": lambda lib: F(lib).grad(lambda a: a.sum(), argnums=0.0)(A(lib, 3)),
    "grad_argnums_tuple_float": lambda lib: F(lib).grad(lambda a: a.sum(), argnums=(0.0,))(A(lib, 3)),
    "grad_argnums_1tuple": lambda lib: F(lib).grad(lambda a, b: (a * b).sum(), argnums=(1,))(A(lib, 3), A(lib, 3)),
    "grad_no_args": lambda lib: F(lib).grad(lambda: 1)(),
    "grad_nontensor_arg": lambda lib: F(lib).grad(lambda a: a)(3.0),
    "grad_nontensor_other_arg": lambda lib: F(lib).grad(lambda a, k: (a * k).sum())(A(lib, 3), 2.0),
    "grad_int_input": lambda lib: F(lib).grad(lambda a: a.sum())(A(lib, 3, dt=lib.int64)),
    "grad_int_input_float_out": lambda lib: F(lib).grad(lambda a: a.double().sum())(A(lib, 3, dt=lib.int64)),
    "grad_bool_input": lambda lib: F(lib).grad(lambda a: a.double().sum())(A(lib, 3) > 0),
    "grad_int_output": lambda lib: F(lib).grad(lambda a: a.sum().long())(A(lib, 3)),
    "grad_complex_output": lambda lib: F(lib).grad(lambda a: (a * 1j).sum())(A(lib, 3)),
    "grad_complex_input_real_out": lambda lib: F(lib).grad(lambda a: (a * a.conj()).real.sum())(
        lib.complex(A(lib, 3), A(lib, 3) + 1)
    ),
    "grad_1elem_nonscalar": lambda lib: F(lib).grad(lambda a: a.sum(0, keepdim=True))(A(lib, 3)),
    "grad_empty_input": lambda lib: F(lib).grad(lambda a: a.sum())(A(lib, 0)),
    "grad_zero_dim": lambda lib: F(lib).grad(lambda a: a * a)(lib.tensor(3.0, dtype=lib.float64)),
    "grad_float32": lambda lib: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3, dt=lib.float32)),
    "grad_has_aux_not_tuple": lambda lib: F(lib).grad(lambda a: a.sum(), has_aux=True)(A(lib, 3)),
    "grad_has_aux_list": lambda lib: F(lib).grad(lambda a: [a.sum(), a], has_aux=True)(A(lib, 3)),
    "grad_has_aux_triple": lambda lib: F(lib).grad(lambda a: (a.sum(), a, a), has_aux=True)(A(lib, 3)),
    "grad_has_aux_nontensor_aux": lambda lib: F(lib).grad(lambda a: (a.sum(), 3), has_aux=True)(A(lib, 3)),
    "grad_has_aux_none_aux": lambda lib: F(lib).grad(lambda a: (a.sum(), None), has_aux=True)(A(lib, 3)),
    "grad_has_aux_aux_requires_grad": lambda lib: (
        F(lib).grad(lambda a: (a.sum(), a * 2), has_aux=True)(A(lib, 3))[1].requires_grad
    ),
    "grad_has_aux_aux_is_input": lambda lib: F(lib).grad(lambda a: (a.sum(), a), has_aux=True)(A(lib, 3)),
    "grad_value_requires_grad": lambda lib: F(lib).grad_and_value(lambda a: (a * a).sum())(A(lib, 3))[1].requires_grad,
    "grad_value_outer_requires_grad": lambda lib: [
        t.requires_grad for t in F(lib).grad_and_value(lambda a: (a * a).sum())(A(lib, 3).requires_grad_())
    ],
    "grad_tuple_out": lambda lib: F(lib).grad(lambda a: (a.sum(), a.sum()))(A(lib, 3)),
    "grad_output_is_input": lambda lib: F(lib).grad(lambda a: a)(lib.tensor(2.0, dtype=lib.float64)),
    "grad_output_unrelated_const": lambda lib: F(lib).grad(lambda a: lib.tensor(1.0))(A(lib, 3)),
    "grad_inplace_on_input": lambda lib: F(lib).grad(lambda a: a.mul_(2).sum())(A(lib, 3)),
    "grad_inplace_on_input_side_effect": lambda lib: (lambda x: (F(lib).grad(lambda a: a.mul_(2).sum())(x), x)[1])(
        A(lib, 3)
    ),
    "grad_detach_inside": lambda lib: F(lib).grad(lambda a: (a.detach() * a).sum())(A(lib, 3)),
    "grad_no_grad_inside": lambda lib: F(lib).grad(lambda a: (lib.no_grad()(lambda: a * 2)() * a).sum())(A(lib, 3)),
    "grad_under_no_grad": lambda lib: lib.no_grad()(lambda: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3)))(),
    "grad_under_inference_mode": lambda lib: lib.inference_mode()(
        lambda: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3))
    )(),
    "grad_dict_argnums": lambda lib: F(lib).grad(lambda d, e: (d["a"] * e).sum(), argnums=(0, 1))(
        {"a": A(lib, 3)}, A(lib, 3)
    ),
    "grad_list_input": lambda lib: F(lib).grad(lambda lv: (lv[0] * lv[1]).sum())([A(lib, 3), A(lib, 3) + 1]),
    "grad_nested_mixed_nontensor": lambda lib: F(lib).grad(lambda d: d["a"].sum())({"a": A(lib, 3), "b": 1}),
    "grad_nan": lambda lib: F(lib).grad(lambda a: a.sqrt().sum())(-A(lib, 3).abs() - 1),
    "grad_of_grad_argnums": lambda lib: F(lib).grad(
        lambda x, y: F(lib).grad(lambda a, b: (a * b * b).sum(), argnums=1)(x, y).sum(), argnums=0
    )(A(lib, 3), A(lib, 3)),
    "grad_of_grad_and_value": lambda lib: F(lib).grad(lambda x: F(lib).grad_and_value(lambda a: (a**3).sum())(x)[1])(
        A(lib, 3)
    ),
    "grad_closure_captured_grad": lambda lib: (lambda c: F(lib).grad(lambda a: (a * c).sum())(A(lib, 3)))(
        A(lib, 3).requires_grad_()
    ),
    "grad_closure_captured_grad_rg": lambda lib: (
        lambda c: F(lib).grad(lambda a: (a * c).sum())(A(lib, 3)).requires_grad
    )(A(lib, 3).requires_grad_()),
    "grad_returns_grad_fn": lambda lib: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3)).grad_fn,
    "grad_result_is_leaf": lambda lib: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3)).is_leaf,
    "grad_kwarg_tensor_not_diff": lambda lib: F(lib).grad(lambda a, b=None: (a * b).sum())(A(lib, 3), b=A(lib, 3)),
    "grad_noncontig_input_strides": lambda lib: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3, 2).t()),
    "grad_expanded_input": lambda lib: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3)[:, None].expand(3, 2)),
    "grad_and_value_has_aux_struct": lambda lib: F(lib).grad_and_value(
        lambda a: (a.sum(), {"k": [a * 2]}), has_aux=True
    )(A(lib, 3)),
    "vjp_nontensor_primal": lambda lib: F(lib).vjp(lambda a: a, 3.0),
    "vjp_int_output": lambda lib: F(lib).vjp(lambda a: a.long(), A(lib, 3)),
    "vjp_nontensor_output": lambda lib: F(lib).vjp(lambda a: 3, A(lib, 3)),
    "vjp_no_primals": lambda lib: F(lib).vjp(lambda: A(lib, 3)),
    "vjp_int_primal": lambda lib: F(lib).vjp(lambda a: a.double() * 2, A(lib, 3, dt=lib.int64))[1](A(lib, 3)),
    "vjp_cotangent_dtype": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1](A(lib, 3, dt=lib.float32)),
    "vjp_cotangent_int": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1](A(lib, 3, dt=lib.int64)),
    "vjp_cotangent_nontensor": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1](3.0),
    "vjp_cotangent_tuple_for_single": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1]((A(lib, 3),)),
    "vjp_cotangent_list_for_tuple": lambda lib: F(lib).vjp(lambda a: (a * 2, a), A(lib, 3))[1]([A(lib, 3), A(lib, 3)]),
    "vjp_call_twice": lambda lib: (lambda fn: (fn(A(lib, 3)), fn(A(lib, 3) * 2)))(
        F(lib).vjp(lambda a: a.sin(), A(lib, 3))[1]
    ),
    "vjp_retain_graph_false": lambda lib: (lambda fn: (fn(A(lib, 3), retain_graph=False), fn(A(lib, 3))))(
        F(lib).vjp(lambda a: a.sin(), A(lib, 3))[1]
    ),
    "vjp_output_is_input": lambda lib: F(lib).vjp(lambda a: a, A(lib, 3))[1](A(lib, 3) + 1),
    "vjp_output_unrelated": lambda lib: F(lib).vjp(lambda a: lib.ones(3, dtype=lib.float64), A(lib, 3))[1](A(lib, 3)),
    "vjp_dict_output": lambda lib: F(lib).vjp(lambda a: {"x": a * 2, "y": a.sum()}, A(lib, 3))[1](
        {"x": A(lib, 3), "y": lib.tensor(1.0, dtype=lib.float64)}
    ),
    "vjp_dict_output_wrong_keys": lambda lib: F(lib).vjp(lambda a: {"x": a * 2}, A(lib, 3))[1]({"z": A(lib, 3)}),
    "vjp_has_aux_bad": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3), has_aux=True),
    "vjp_has_aux_nontensor": lambda lib: F(lib).vjp(lambda a: (a * 2, "s"), A(lib, 3), has_aux=True)[2],
    "vjp_empty": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 0))[1](A(lib, 0)),
    "vjp_complex": lambda lib: F(lib).vjp(lambda a: a * a, lib.complex(A(lib, 3), A(lib, 3) + 1))[1](
        lib.complex(A(lib, 3), -A(lib, 3))
    ),
    "vjp_output_requires_grad": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[0].requires_grad,
    "vjp_kwargs_primal": lambda lib: F(lib).vjp(lambda a, b: a * b, A(lib, 3), A(lib, 3))[1](A(lib, 3)),
    "vjp_under_vmap_batched_primal": lambda lib: F(lib).vmap(
        lambda x: F(lib).vjp(lambda a: a.sin(), x)[1](lib.ones_like(x))
    )(A(lib, 2, 3)),
    "vjp_cotangent_batched_shape_mismatch": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1](A(lib, 1)),
    "jvp_primals_list": lambda lib: F(lib).jvp(lambda a: a * 2, [A(lib, 3)], [A(lib, 3)]),
    "jvp_primals_tensor": lambda lib: F(lib).jvp(lambda a: a * 2, A(lib, 3), A(lib, 3)),
    "jvp_tangents_list": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 3),), [A(lib, 3)]),
    "jvp_len_mismatch": lambda lib: F(lib).jvp(lambda a, b: a * b, (A(lib, 3), A(lib, 3)), (A(lib, 3),)),
    "jvp_empty_primals": lambda lib: F(lib).jvp(lambda: A(lib, 3), (), ()),
    "jvp_nontensor_output": lambda lib: F(lib).jvp(lambda a: 3, (A(lib, 3),), (A(lib, 3),)),
    "jvp_int_output": lambda lib: F(lib).jvp(lambda a: a > 0, (A(lib, 3),), (A(lib, 3),)),
    "jvp_output_is_input": lambda lib: F(lib).jvp(lambda a: a, (A(lib, 3),), (A(lib, 3) + 1,)),
    "jvp_output_constant": lambda lib: F(lib).jvp(lambda a: lib.ones(2, dtype=lib.float64), (A(lib, 3),), (A(lib, 3),)),
    "jvp_dtype_mismatch": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 3),), (A(lib, 3, dt=lib.float32),)),
    "jvp_float32": lambda lib: F(lib).jvp(lambda a: a * a, (A(lib, 3, dt=lib.float32),), (A(lib, 3, dt=lib.float32),)),
    "jvp_complex": lambda lib: F(lib).jvp(
        lambda a: a * a, (lib.complex(A(lib, 3), A(lib, 3)),), (lib.complex(A(lib, 3), -A(lib, 3)),)
    ),
    "jvp_empty": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 0),), (A(lib, 0),)),
    "jvp_zero_dim": lambda lib: F(lib).jvp(
        lambda a: a.exp(), (lib.tensor(1.0, dtype=lib.float64),), (lib.tensor(2.0, dtype=lib.float64),)
    ),
    "jvp_strict_true": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 3),), (A(lib, 3),), strict=True),
    "jvp_has_aux_bad": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 3),), (A(lib, 3),), has_aux=True),
    "jvp_output_requires_grad": lambda lib: [
        t.requires_grad for t in F(lib).jvp(lambda a: a * 2, (A(lib, 3),), (A(lib, 3),))
    ],
    "jvp_nested_primal_dict": lambda lib: F(lib).jvp(lambda d: d["a"] * 2, ({"a": A(lib, 3)},), ({"a": A(lib, 3)},)),
    "jvp_tuple_output": lambda lib: F(lib).jvp(lambda a: (a * 2, a.sum()), (A(lib, 3),), (A(lib, 3),)),
    "jvp_inplace_inside": lambda lib: F(lib).jvp(lambda a: a.clone().mul_(a), (A(lib, 3),), (A(lib, 3),)),
    "jvp_noncontig_tangent": lambda lib: F(lib).jvp(lambda a: a * a, (A(lib, 3, 2),), (A(lib, 2, 3).t(),)),
    "jvp_of_grad": lambda lib: F(lib).jvp(F(lib).grad(lambda a: (a**3).sum()), (A(lib, 3),), (A(lib, 3),)),
    "grad_of_jvp": lambda lib: F(lib).grad(lambda x: F(lib).jvp(lambda a: (a**3).sum(), (x,), (lib.ones_like(x),))[1])(
        A(lib, 3)
    ),
    "jvp_tangent_nontensor": lambda lib: F(lib).jvp(lambda a: a * 2, (A(lib, 3),), (1.0,)),
    "linearize_tuple_output": lambda lib: (lambda o, fn: fn(A(lib, 3)))(
        *F(lib).linearize(lambda a: (a * 2, a.sum()), A(lib, 3))
    ),
    "linearize_wrong_shape": lambda lib: (lambda o, fn: fn(A(lib, 2)))(*F(lib).linearize(lambda a: a * 2, A(lib, 3))),
    "linearize_wrong_dtype": lambda lib: (lambda o, fn: fn(A(lib, 3, dt=lib.float32)))(
        *F(lib).linearize(lambda a: a * 2, A(lib, 3))
    ),
    "linearize_wrong_count": lambda lib: (lambda o, fn: fn(A(lib, 3), A(lib, 3)))(
        *F(lib).linearize(lambda a: a * 2, A(lib, 3))
    ),
    "linearize_output_is_input": lambda lib: (lambda o, fn: fn(A(lib, 3) + 1))(
        *F(lib).linearize(lambda a: a, A(lib, 3))
    ),
    "linearize_constant": lambda lib: (lambda o, fn: fn(A(lib, 3)))(
        *F(lib).linearize(lambda a: lib.ones(2, dtype=lib.float64), A(lib, 3))
    ),
    "linearize_requires_grad": lambda lib: (lambda o, fn: (o.requires_grad, fn(A(lib, 3)).requires_grad))(
        *F(lib).linearize(lambda a: a.sin(), A(lib, 3))
    ),
    "linearize_int_primal": lambda lib: F(lib).linearize(lambda a: a * 2, A(lib, 3, dt=lib.int64)),
    "linearize_dict_primal": lambda lib: (lambda o, fn: fn({"a": A(lib, 3)}))(
        *F(lib).linearize(lambda d: d["a"].sin(), {"a": A(lib, 3)})
    ),
    "jacrev_nontensor_out": lambda lib: F(lib).jacrev(lambda a: 3)(A(lib, 3)),
    "jacrev_int_out": lambda lib: F(lib).jacrev(lambda a: a.long())(A(lib, 3)),
    "jacrev_int_in": lambda lib: F(lib).jacrev(lambda a: a * 2)(A(lib, 3, dt=lib.int64)),
    "jacrev_zero_dim": lambda lib: F(lib).jacrev(lambda a: a.exp())(lib.tensor(1.0, dtype=lib.float64)),
    "jacrev_empty_out": lambda lib: F(lib).jacrev(lambda a: a[:0])(A(lib, 3)),
    "jacrev_output_is_input": lambda lib: F(lib).jacrev(lambda a: a)(A(lib, 3)),
    "jacrev_constant_out": lambda lib: F(lib).jacrev(lambda a: lib.ones(2, dtype=lib.float64))(A(lib, 3)),
    "jacrev_float32": lambda lib: F(lib).jacrev(lambda a: a * a)(A(lib, 3, dt=lib.float32)),
    "jacrev_mixed_dtypes": lambda lib: F(lib).jacrev(lambda a: a.float() * 2)(A(lib, 3)),
    "jacrev_chunk_0": lambda lib: F(lib).jacrev(lambda a: a * 2, chunk_size=0)(A(lib, 3)),
    "jacrev_chunk_1": lambda lib: F(lib).jacrev(lambda a: a * a, chunk_size=1)(A(lib, 3)),
    "jacrev_chunk_big": lambda lib: F(lib).jacrev(lambda a: a * a, chunk_size=100)(A(lib, 3)),
    "jacrev_chunk_mixed_dtypes": lambda lib: F(lib).jacrev(lambda a: a.float() * 2, chunk_size=2)(A(lib, 3)),
    "jacrev_chunk_float32": lambda lib: F(lib).jacrev(lambda a: a * a, chunk_size=2)(A(lib, 3, dt=lib.float32)),
    "jacrev_has_aux_bad": lambda lib: F(lib).jacrev(lambda a: a * 2, has_aux=True)(A(lib, 3)),
    "jacrev_dict_out": lambda lib: F(lib).jacrev(lambda a: {"x": a * 2, "y": a.sum()})(A(lib, 3)),
    "jacrev_argnums_dict_in": lambda lib: F(lib).jacrev(lambda d: d["w"] * 2)({"w": A(lib, 2)}),
    "jacrev_complex_out": lambda lib: F(lib).jacrev(lambda a: a * 1j)(A(lib, 3)),
    "jacrev_complex_in": lambda lib: F(lib).jacrev(lambda a: a * a)(lib.complex(A(lib, 2), A(lib, 2))),
    "jacrev_noncontig": lambda lib: F(lib).jacrev(lambda a: a * a)(A(lib, 3, 2).t()),
    "jacrev_requires_grad_input": lambda lib: F(lib).jacrev(lambda a: a * a)(A(lib, 3).requires_grad_()).requires_grad,
    "jacrev_kwargs": lambda lib: F(lib).jacrev(lambda a, b=None: a * b)(A(lib, 3), b=A(lib, 3)),
    "jacrev_nontensor_arg": lambda lib: F(lib).jacrev(lambda a: a)(3.0),
    "jacrev_empty_in": lambda lib: F(lib).jacrev(lambda a: a.sum() + 1)(A(lib, 0)),
    "jacfwd_nontensor_out": lambda lib: F(lib).jacfwd(lambda a: 3)(A(lib, 3)),
    "jacfwd_int_in": lambda lib: F(lib).jacfwd(lambda a: a * 2)(A(lib, 3, dt=lib.int64)),
    "jacfwd_int_out": lambda lib: F(lib).jacfwd(lambda a: a.long())(A(lib, 3)),
    "jacfwd_zero_dim": lambda lib: F(lib).jacfwd(lambda a: a.exp())(lib.tensor(1.0, dtype=lib.float64)),
    "jacfwd_empty_out": lambda lib: F(lib).jacfwd(lambda a: a[:0])(A(lib, 3)),
    "jacfwd_output_is_input": lambda lib: F(lib).jacfwd(lambda a: a)(A(lib, 3)),
    "jacfwd_constant_out": lambda lib: F(lib).jacfwd(lambda a: lib.ones(2, dtype=lib.float64))(A(lib, 3)),
    "jacfwd_tuple_out": lambda lib: F(lib).jacfwd(lambda a: (a * 2, a.sum()))(A(lib, 3)),
    "jacfwd_has_aux": lambda lib: F(lib).jacfwd(lambda a: (a * 2, a.sum()), has_aux=True)(A(lib, 3)),
    "jacfwd_has_aux_bad": lambda lib: F(lib).jacfwd(lambda a: a * 2, has_aux=True)(A(lib, 3)),
    "jacfwd_randomness_bad": lambda lib: F(lib).jacfwd(lambda a: a * 2, randomness="x")(A(lib, 3)),
    "jacfwd_random_error": lambda lib: F(lib).jacfwd(lambda a: a * lib.rand(3))(A(lib, 3)),
    "jacfwd_random_same": lambda lib: F(lib).jacfwd(lambda a: a * (lib.rand(3) * 0 + 1), randomness="same")(A(lib, 3)),
    "jacrev_random": lambda lib: F(lib).jacrev(lambda a: a * (lib.rand(3) * 0 + 1))(A(lib, 3)),
    "jacfwd_float32": lambda lib: F(lib).jacfwd(lambda a: a * a)(A(lib, 3, dt=lib.float32)),
    "jacfwd_mixed_dtypes": lambda lib: F(lib).jacfwd(lambda a: a.float() * 2)(A(lib, 3)),
    "jacfwd_complex_in": lambda lib: F(lib).jacfwd(lambda a: a * a)(lib.complex(A(lib, 2), A(lib, 2))),
    "jacfwd_argnums_out_of_range": lambda lib: F(lib).jacfwd(lambda a: a, argnums=2)(A(lib, 3)),
    "jacfwd_noncontig": lambda lib: F(lib).jacfwd(lambda a: a * a)(A(lib, 3, 2).t()),
    "hessian_zero_dim": lambda lib: F(lib).hessian(lambda a: a.exp())(lib.tensor(1.0, dtype=lib.float64)),
    "hessian_nonscalar": lambda lib: F(lib).hessian(lambda a: a * a * a)(A(lib, 2)),
    "hessian_argnums_tuple": lambda lib: F(lib).hessian(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(
        A(lib, 2), A(lib, 2)
    ),
    "hessian_linear": lambda lib: F(lib).hessian(lambda a: a.sum() * 2)(A(lib, 2)),
    "hessian_matrix": lambda lib: F(lib).hessian(lambda a: (a.sin()).sum())(A(lib, 2, 2)),
    "hessian_int": lambda lib: F(lib).hessian(lambda a: a.sum())(A(lib, 2, dt=lib.int64)),
    "hessian_float32": lambda lib: F(lib).hessian(lambda a: (a**3).sum())(A(lib, 2, dt=lib.float32)),
    "hessian_empty": lambda lib: F(lib).hessian(lambda a: a.sum())(A(lib, 0)),
    "fz_bad_remove": lambda lib: F(lib).functionalize(lambda a: a, remove="x"),
    "fz_basic": lambda lib: F(lib).functionalize(lambda a: a.clone().add_(1))(A(lib, 3)),
    "fz_input_mutation": lambda lib: (lambda x: (F(lib).functionalize(lambda a: a.add_(1))(x), x))(A(lib, 3)),
    "fz_input_mutation_views": lambda lib: (
        lambda x: (F(lib).functionalize(lambda a: a.add_(1), remove="mutations_and_views")(x), x)
    )(A(lib, 3)),
    "fz_view_mutation": lambda lib: (lambda x: (F(lib).functionalize(lambda a: (a[0].mul_(3), a * 1)[1])(x), x))(
        A(lib, 2, 3)
    ),
    "fz_view_out": lambda lib: F(lib).functionalize(lambda a: a.t())(A(lib, 2, 3)),
    "fz_view_out_views": lambda lib: F(lib).functionalize(lambda a: a.t(), remove="mutations_and_views")(A(lib, 2, 3)),
    "fz_return_input": lambda lib: F(lib).functionalize(lambda a: a)(A(lib, 2, 3)),
    "fz_nontensor_out": lambda lib: F(lib).functionalize(lambda a: 3)(A(lib, 2, 3)),
    "fz_tuple_out": lambda lib: F(lib).functionalize(lambda a: (a + 1, a.sum()))(A(lib, 2, 3)),
    "fz_dict_in": lambda lib: F(lib).functionalize(lambda d: d["a"] + 1)({"a": A(lib, 2)}),
    "fz_kwargs": lambda lib: F(lib).functionalize(lambda a, b=None: a + b)(A(lib, 2), b=A(lib, 2)),
    "fz_nontensor_arg": lambda lib: F(lib).functionalize(lambda a, k: a * k)(A(lib, 2), 3),
    "fz_int_tensor": lambda lib: F(lib).functionalize(lambda a: a.add_(1))(A(lib, 2, dt=lib.int64)),
    "fz_empty": lambda lib: F(lib).functionalize(lambda a: a.add_(1))(A(lib, 0)),
    "fz_zero_dim": lambda lib: F(lib).functionalize(lambda a: a.mul_(2))(lib.tensor(3.0)),
    "fz_requires_grad": lambda lib: (
        F(lib).functionalize(lambda a: (a * 2).sin())(A(lib, 3).requires_grad_()).requires_grad
    ),
    "fz_grad_through": lambda lib: (
        lambda x: lib.autograd.grad(F(lib).functionalize(lambda a: a.clone().mul_(a))(x).sum(), x)
    )(A(lib, 3).requires_grad_()),
    "fz_grad_of": lambda lib: F(lib).grad(F(lib).functionalize(lambda a: a.clone().mul_(a).sum()))(A(lib, 3)),
    "fz_vmap_of": lambda lib: F(lib).vmap(F(lib).functionalize(lambda a: a.clone().mul_(2)))(A(lib, 2, 3)),
    "fz_of_vmap": lambda lib: F(lib).functionalize(F(lib).vmap(lambda a: a.clone().mul_(2)))(A(lib, 2, 3)),
    "fz_random": lambda lib: F(lib).functionalize(lambda a: a + lib.rand(3) * 0)(A(lib, 3)),
    "fz_item": lambda lib: F(lib).functionalize(lambda a: a * a.sum().item())(A(lib, 3)),
    "fz_data_dependent_if": lambda lib: F(lib).functionalize(lambda a: a * 2 if a.sum() > 0 else a)(A(lib, 3)),
    "fz_setitem": lambda lib: (lambda x: (F(lib).functionalize(lambda a: (a.__setitem__(0, 9.0), a.sum())[1])(x), x))(
        A(lib, 3)
    ),
    "fz_strides_views_removed": lambda lib: F(lib).functionalize(
        lambda a: a.transpose(0, 1).mul(1), remove="mutations_and_views"
    )(A(lib, 2, 3)),
    "fz_return_view_of_mutated_input": lambda lib: (
        lambda x: (F(lib).functionalize(lambda a: (a.add_(1), a[0])[1])(x), x)
    )(A(lib, 2, 3)),
    "fz_no_args": lambda lib: F(lib).functionalize(lambda: lib.ones(2))(),
    "fz_noncontig_input_mut": lambda lib: (lambda x: (F(lib).functionalize(lambda a: a.mul_(2))(x.t()), x))(
        A(lib, 2, 3)
    ),
    "fz_in_place_on_expanded": lambda lib: F(lib).functionalize(lambda a: a.expand(2, 3).add_(1))(A(lib, 3)),
    "sms_empty": lambda lib: F(lib).stack_module_state([]),
    "sms_one": lambda lib: (lambda p, b: (sorted(p), [tuple(v.shape) for v in p.values()]))(
        *F(lib).stack_module_state([lib.nn.Linear(2, 3)])
    ),
    "sms_mismatched": lambda lib: F(lib).stack_module_state([lib.nn.Linear(2, 3), lib.nn.Linear(3, 3)]),
    "sms_different_types": lambda lib: F(lib).stack_module_state([lib.nn.Linear(2, 3), lib.nn.Conv1d(2, 3, 1)]),
    "sms_train_eval_mixed": lambda lib: F(lib).stack_module_state([lib.nn.Linear(2, 3), lib.nn.Linear(2, 3).eval()]),
    "sms_requires_grad": lambda lib: (
        lambda p, b: [v.requires_grad for v in p.values()] + [v.is_leaf for v in p.values()]
    )(*F(lib).stack_module_state([lib.nn.Linear(2, 3), lib.nn.Linear(2, 3)])),
    "sms_frozen_param": lambda lib: (
        lambda ms: (lambda p, b: [v.requires_grad for v in p.values()])(*F(lib).stack_module_state(ms))
    )([lib.nn.Linear(2, 3).requires_grad_(False), lib.nn.Linear(2, 3).requires_grad_(False)]),
    "sms_tuple_of_modules": lambda lib: sorted(
        F(lib).stack_module_state((lib.nn.Linear(2, 3), lib.nn.Linear(2, 3)))[0]
    ),
    "sms_generator": lambda lib: sorted(
        F(lib).stack_module_state(m for m in [lib.nn.Linear(2, 3), lib.nn.Linear(2, 3)])[0]
    ),
    "sms_not_module": lambda lib: F(lib).stack_module_state([1, 2]),
    "sms_shared_module": lambda lib: (
        lambda m: [tuple(v.shape) for v in F(lib).stack_module_state([m, m])[0].values()]
    )(lib.nn.Linear(2, 3)),
    "sms_tied_weights": lambda lib: None,
}


# autograd.functional, autograd.grad(is_grads_batched=True), utils._pytree, modules under vmap
AUTOGRAD_AND_PYTREE = {
    "jac_vec_basic": lambda lib: AF(lib).jacobian(lambda a: a.sin() * a, A(lib, 3), vectorize=True),
    "jac_vec_tuple_in": lambda lib: AF(lib).jacobian(lambda a, b: a * b, (A(lib, 3), A(lib, 3) + 1), vectorize=True),
    "jac_vec_tuple_out": lambda lib: AF(lib).jacobian(lambda a: (a * 2, a.sum()), A(lib, 3), vectorize=True),
    "jac_vec_unused_input": lambda lib: AF(lib).jacobian(lambda a, b: a * 2, (A(lib, 3), A(lib, 2)), vectorize=True),
    "jac_vec_constant": lambda lib: AF(lib).jacobian(
        lambda a: lib.ones(2, dtype=lib.float64), A(lib, 3), vectorize=True
    ),
    "jac_constant": lambda lib: AF(lib).jacobian(lambda a: lib.ones(2, dtype=lib.float64), A(lib, 3)),
    "jac_vec_create_graph": lambda lib: (
        AF(lib).jacobian(lambda a: a**3, A(lib, 3).requires_grad_(), vectorize=True, create_graph=True).requires_grad
    ),
    "jac_create_graph_rg": lambda lib: (
        AF(lib).jacobian(lambda a: a**3, A(lib, 3).requires_grad_(), create_graph=True).requires_grad
    ),
    "jac_create_graph_noinput_rg": lambda lib: (
        AF(lib).jacobian(lambda a: a**3, A(lib, 3), create_graph=True).requires_grad
    ),
    "jac_vec_strict": lambda lib: AF(lib).jacobian(lambda a: a * 2, A(lib, 3), vectorize=True, strict=True),
    "jac_strict_unused": lambda lib: AF(lib).jacobian(lambda a, b: a * 2, (A(lib, 3), A(lib, 2)), strict=True),
    "jac_strict_constant": lambda lib: AF(lib).jacobian(
        lambda a: lib.ones(2, dtype=lib.float64), A(lib, 3), strict=True
    ),
    "jac_strict_create_graph_linear": lambda lib: AF(lib).jacobian(
        lambda a: a * 2, A(lib, 3), strict=True, create_graph=True
    ),
    "jac_zero_dim": lambda lib: AF(lib).jacobian(lambda a: a.exp(), lib.tensor(1.0, dtype=lib.float64)),
    "jac_vec_zero_dim": lambda lib: AF(lib).jacobian(
        lambda a: a.exp(), lib.tensor(1.0, dtype=lib.float64), vectorize=True
    ),
    "jac_empty_in": lambda lib: AF(lib).jacobian(lambda a: a.sum() + 1, A(lib, 0)),
    "jac_vec_empty_in": lambda lib: AF(lib).jacobian(lambda a: a.sum() + 1, A(lib, 0), vectorize=True),
    "jac_empty_out": lambda lib: AF(lib).jacobian(lambda a: a[:0], A(lib, 3)),
    "jac_int_in": lambda lib: AF(lib).jacobian(lambda a: a * 2, A(lib, 3, dt=lib.int64)),
    "jac_int_out": lambda lib: AF(lib).jacobian(lambda a: a.long(), A(lib, 3)),
    "jac_vec_int_out": lambda lib: AF(lib).jacobian(lambda a: a.long(), A(lib, 3), vectorize=True),
    "jac_nontensor_out": lambda lib: AF(lib).jacobian(lambda a: 3, A(lib, 3)),
    "jac_list_in": lambda lib: AF(lib).jacobian(lambda a: a, [A(lib, 3)]),
    "jac_list_out": lambda lib: AF(lib).jacobian(lambda a: [a, a], A(lib, 3)),
    "jac_float32": lambda lib: AF(lib).jacobian(lambda a: a * a, A(lib, 3, dt=lib.float32)),
    "jac_vec_float32": lambda lib: AF(lib).jacobian(lambda a: a * a, A(lib, 3, dt=lib.float32), vectorize=True),
    "jac_vec_mixed_dtypes": lambda lib: AF(lib).jacobian(lambda a: (a.float() * 2, a * 3), A(lib, 3), vectorize=True),
    "jac_mixed_dtypes": lambda lib: AF(lib).jacobian(lambda a: (a.float() * 2, a * 3), A(lib, 3)),
    "jac_complex": lambda lib: AF(lib).jacobian(lambda a: a * a, lib.complex(A(lib, 2), A(lib, 2))),
    "jac_strategy_bad": lambda lib: AF(lib).jacobian(lambda a: a, A(lib, 3), strategy="x"),
    "jac_forward_no_vec": lambda lib: AF(lib).jacobian(lambda a: a, A(lib, 3), strategy="forward-mode"),
    "jac_noncontig": lambda lib: AF(lib).jacobian(lambda a: a * a, A(lib, 3, 2).t()),
    "jac_vec_noncontig": lambda lib: AF(lib).jacobian(lambda a: a * a, A(lib, 3, 2).t(), vectorize=True),
    "jac_output_is_input": lambda lib: AF(lib).jacobian(lambda a: a, A(lib, 3)),
    "jac_vec_output_is_input": lambda lib: AF(lib).jacobian(lambda a: a, A(lib, 3), vectorize=True),
    "jac_input_rg_no_cg": lambda lib: AF(lib).jacobian(lambda a: a * a, A(lib, 3).requires_grad_()).requires_grad,
    "jac_vec_matrix": lambda lib: AF(lib).jacobian(lambda m: m @ A(lib, 3), A(lib, 2, 3), vectorize=True),
    "hes_basic": lambda lib: AF(lib).hessian(lambda a: (a**3).sum(), A(lib, 3)),
    "hes_vec": lambda lib: AF(lib).hessian(lambda a: (a**3).sum(), A(lib, 3), vectorize=True),
    "hes_vec_tuple": lambda lib: AF(lib).hessian(
        lambda a, b: (a * a * b).sum(), (A(lib, 2), A(lib, 2)), vectorize=True
    ),
    "hes_vec_create_graph": lambda lib: (
        AF(lib).hessian(lambda a: (a**3).sum(), A(lib, 3), vectorize=True, create_graph=True).requires_grad
    ),
    "hes_create_graph": lambda lib: (
        AF(lib).hessian(lambda a: (a**3).sum(), A(lib, 3).requires_grad_(), create_graph=True).requires_grad
    ),
    "hes_strict_linear": lambda lib: AF(lib).hessian(lambda a: a.sum() * 2, A(lib, 3), strict=True),
    "hes_linear": lambda lib: AF(lib).hessian(lambda a: a.sum() * 2, A(lib, 3)),
    "hes_vec_linear": lambda lib: AF(lib).hessian(lambda a: a.sum() * 2, A(lib, 3), vectorize=True),
    "hes_vec_strict": lambda lib: AF(lib).hessian(lambda a: (a**3).sum(), A(lib, 3), vectorize=True, strict=True),
    "hes_nonscalar": lambda lib: AF(lib).hessian(lambda a: a * 2, A(lib, 3)),
    "hes_1elem": lambda lib: AF(lib).hessian(lambda a: (a**3).sum(0, keepdim=True), A(lib, 3)),
    "hes_tuple_out": lambda lib: AF(lib).hessian(lambda a: (a.sum(),), A(lib, 3)),
    "hes_zero_dim": lambda lib: AF(lib).hessian(lambda a: a.exp(), lib.tensor(1.0, dtype=lib.float64)),
    "hes_vec_zero_dim": lambda lib: AF(lib).hessian(
        lambda a: a.exp(), lib.tensor(1.0, dtype=lib.float64), vectorize=True
    ),
    "hes_int": lambda lib: AF(lib).hessian(lambda a: a.sum(), A(lib, 3, dt=lib.int64)),
    "hes_strategy_bad": lambda lib: AF(lib).hessian(lambda a: a.sum(), A(lib, 3), outer_jacobian_strategy="x"),
    "hes_forward_mode_novec": lambda lib: AF(lib).hessian(
        lambda a: (a**3).sum(), A(lib, 3), outer_jacobian_strategy="forward-mode"
    ),
    "hes_empty": lambda lib: AF(lib).hessian(lambda a: a.sum(), A(lib, 0)),
    "vjp_none_v_scalar": lambda lib: AF(lib).vjp(lambda a: a.sum(), A(lib, 3)),
    "vjp_none_v_vector": lambda lib: AF(lib).vjp(lambda a: a * 2, A(lib, 3)),
    "vjp_v_shape": lambda lib: AF(lib).vjp(lambda a: a * 2, A(lib, 3), A(lib, 2)),
    "vjp_strict_const": lambda lib: AF(lib).vjp(
        lambda a: lib.ones(3, dtype=lib.float64), A(lib, 3), A(lib, 3), strict=True
    ),
    "jvp_af_basic": lambda lib: AF(lib).jvp(lambda a: a.sin(), A(lib, 3), A(lib, 3)),
    "jvp_af_strict_linear_ok": lambda lib: AF(lib).jvp(lambda a: a * 2, A(lib, 3), A(lib, 3), strict=True),
    "jvp_af_v_dtype": lambda lib: AF(lib).jvp(lambda a: a * 2, A(lib, 3), A(lib, 3, dt=lib.float32)),
    "hvp_basic": lambda lib: AF(lib).hvp(lambda a: (a**3).sum(), A(lib, 3), A(lib, 3)),
    "vhp_basic": lambda lib: AF(lib).vhp(lambda a: (a**3).sum(), A(lib, 3), A(lib, 3)),
    "hvp_linear": lambda lib: AF(lib).hvp(lambda a: a.sum(), A(lib, 3), A(lib, 3)),
    "hvp_strict_linear": lambda lib: AF(lib).hvp(lambda a: a.sum(), A(lib, 3), A(lib, 3), strict=True),
    "igb_basic": lambda lib: (lambda x: G(lib)(x.sin(), x, lib.eye(3, dtype=lib.float64), is_grads_batched=True))(
        A(lib, 3).requires_grad_()
    ),
    "igb_scalar_out": lambda lib: (
        lambda x: G(lib)((x * x).sum(), x, lib.ones(4, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_wrong_batch_shape": lambda lib: (
        lambda x: G(lib)(x.sin(), x, lib.ones(4, 2, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_no_batch_dim": lambda lib: (
        lambda x: G(lib)(x.sin(), x, lib.ones(3, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_none_grad_output": lambda lib: (lambda x: G(lib)(x.sin(), x, None, is_grads_batched=True))(
        A(lib, 3).requires_grad_()
    ),
    "igb_none_scalar": lambda lib: (lambda x: G(lib)(x.sin().sum(), x, None, is_grads_batched=True))(
        A(lib, 3).requires_grad_()
    ),
    "igb_two_outputs": lambda lib: (
        lambda x: G(lib)(
            (x.sin(), x * 2),
            x,
            (lib.ones(2, 3, dtype=lib.float64), lib.eye(2, 3, dtype=lib.float64)),
            is_grads_batched=True,
        )
    )(A(lib, 3).requires_grad_()),
    "igb_two_outputs_batch_mismatch": lambda lib: (
        lambda x: G(lib)(
            (x.sin(), x * 2),
            x,
            (lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 3, dtype=lib.float64)),
            is_grads_batched=True,
        )
    )(A(lib, 3).requires_grad_()),
    "igb_create_graph": lambda lib: (
        lambda x: (
            G(lib)(x**3, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True, create_graph=True)[0].requires_grad
        )
    )(A(lib, 3).requires_grad_()),
    "igb_allow_unused": lambda lib: (
        lambda x, y: G(lib)(x.sin(), (x, y), lib.eye(3, dtype=lib.float64), is_grads_batched=True, allow_unused=True)
    )(A(lib, 3).requires_grad_(), A(lib, 2).requires_grad_()),
    "igb_unused_error": lambda lib: (
        lambda x, y: G(lib)(x.sin(), (x, y), lib.eye(3, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_(), A(lib, 2).requires_grad_()),
    "igb_materialize": lambda lib: (
        lambda x, y: G(lib)(
            x.sin(), (x, y), lib.eye(3, dtype=lib.float64), is_grads_batched=True, materialize_grads=True
        )
    )(A(lib, 3).requires_grad_(), A(lib, 2).requires_grad_()),
    "igb_dtype_mismatch": lambda lib: (
        lambda x: G(lib)(x.sin(), x, lib.eye(3, dtype=lib.float32), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_matmul": lambda lib: (
        lambda w: G(lib)(w @ A(lib, 3), w, lib.eye(2, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 2, 3).requires_grad_()),
    "igb_float32": lambda lib: (lambda x: G(lib)(x * x, x, lib.eye(3), is_grads_batched=True))(
        A(lib, 3, dt=lib.float32).requires_grad_()
    ),
    "igb_retain_false_twice": lambda lib: (
        lambda x: (
            lambda y: (
                G(lib)(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True),
                G(lib)(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True),
            )
        )(x.exp())
    )(A(lib, 3).requires_grad_()),
    "igb_noncontig_grad": lambda lib: (lambda x: G(lib)(x * x, x, A(lib, 3, 2).t(), is_grads_batched=True))(
        A(lib, 2).requires_grad_()
    ),
    "igb_expanded_grad": lambda lib: (
        lambda x: G(lib)(x * x, x, lib.ones(2, dtype=lib.float64).expand(4, 2), is_grads_batched=True)
    )(A(lib, 2).requires_grad_()),
    "igb_sum_backward": lambda lib: (
        lambda x: G(lib)(x.sum(0), x, lib.eye(2, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3, 2).requires_grad_()),
    "igb_index_backward": lambda lib: (
        lambda x: G(lib)(x[lib.tensor([0, 0, 2])], x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_softmax_backward": lambda lib: (
        lambda x: G(lib)(x.softmax(0), x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "igb_bool_flag_output_not_tensor": lambda lib: (
        lambda x: G(lib)(x * 1, x, [lib.eye(3, dtype=lib.float64)], is_grads_batched=True)
    )(A(lib, 3).requires_grad_()),
    "pt_flatten_nested": lambda lib: P(lib).tree_flatten({"b": [1, (2, 3)], "a": None})[0],
    "pt_flatten_none_leaf": lambda lib: P(lib).tree_flatten(None)[0],
    "pt_flatten_dict_order": lambda lib: P(lib).tree_flatten({"b": 1, "a": 2})[0],
    "pt_flatten_empty": lambda lib: P(lib).tree_flatten(([], {}, ()))[0],
    "pt_leaves_none": lambda lib: P(lib).tree_leaves([None, 1]),
    "pt_map_none": lambda lib: P(lib).tree_map(lambda x: (x, 1), [None, 2]),
    "pt_unflatten_roundtrip": lambda lib: (lambda lv, s: P(lib).tree_unflatten([x * 10 for x in lv], s))(
        *P(lib).tree_flatten({"b": [1, (2, 3)], "a": 4})
    ),
    "pt_unflatten_too_few": lambda lib: (lambda lv, s: P(lib).tree_unflatten(lv[:1], s))(*P(lib).tree_flatten([1, 2])),
    "pt_unflatten_too_many": lambda lib: (lambda lv, s: P(lib).tree_unflatten(lv + [3], s))(
        *P(lib).tree_flatten([1, 2])
    ),
    "pt_namedtuple": lambda lib: (lambda lv, s: (lv, P(lib).tree_unflatten(lv, s)))(*P(lib).tree_flatten(NT(1, [2]))),
    "pt_map_namedtuple": lambda lib: P(lib).tree_map(lambda x: x + 1, NT(1, 2)),
    "pt_map_multiple": lambda lib: P(lib).tree_map(lambda x, y: x + y, [1, 2], [3, 4]),
    "pt_map_ordereddict": lambda lib: type(P(lib).tree_map(lambda x: x, collections.OrderedDict(a=1))).__name__,
    "pt_flatten_ordereddict": lambda lib: (lambda lv, s: (lv, type(P(lib).tree_unflatten(lv, s)).__name__))(
        *P(lib).tree_flatten(collections.OrderedDict(b=1, a=2))
    ),
    "pt_defaultdict": lambda lib: (lambda lv, s: (lv, type(P(lib).tree_unflatten(lv, s)).__name__))(
        *P(lib).tree_flatten(collections.defaultdict(int, b=1, a=2))
    ),
    "pt_deque": lambda lib: (lambda lv, s: (lv, type(P(lib).tree_unflatten(lv, s)).__name__))(
        *P(lib).tree_flatten(collections.deque([1, 2]))
    ),
    "pt_set_leaf": lambda lib: P(lib).tree_flatten({1, 2})[0] == [{1, 2}],
    "pt_tuple_subclass_leaf": lambda lib: len(P(lib).tree_flatten(lib.Size([2, 3]))[0]),
    "pt_spec_num_leaves": lambda lib: P(lib).tree_flatten([1, [2, 3]])[1].num_leaves,
    "pt_spec_eq": lambda lib: P(lib).tree_flatten([1, [2, 3]])[1] == P(lib).tree_flatten([4, [5, 6]])[1],
    "pt_spec_neq_type": lambda lib: P(lib).tree_flatten([1, 2])[1] == P(lib).tree_flatten((1, 2))[1],
    "pt_broadcast": lambda lib: P(lib)._broadcast_to_and_flatten((0, None), P(lib).tree_flatten((1, [2, 3]))[1]),
    "pt_broadcast_bad": lambda lib: P(lib)._broadcast_to_and_flatten((0, 1, 2), P(lib).tree_flatten((1, [2, 3]))[1]),
    "pt_leaves_dict_keys_mixed": lambda lib: P(lib).tree_leaves({1: "a", "x": "b"}),
    "pt_tree_all": lambda lib: P(lib).tree_all(lambda x: x > 0, [1, (2, 3)]),
    "pt_tree_any": lambda lib: P(lib).tree_any(lambda x: x > 2, [1, (2, 3)]),
    "pt_tree_map_only": lambda lib: P(lib).tree_map_only(int, lambda x: x * 2, [1, "a", 2.0]),
    "pt_tree_structure": lambda lib: P(lib).tree_structure([1, 2]) == P(lib).tree_flatten([3, 4])[1],
    "pt_map_tensor_leaf": lambda lib: P(lib).tree_map(lambda t: t * 2, {"a": A(lib, 2)}),
    "pt_map_with_none_is_leaf": lambda lib: P(lib).tree_leaves([1, None, [None]]),
    "pt_is_leaf": lambda lib: P(lib).tree_flatten([1, [2, 3]], is_leaf=lambda x: isinstance(x, list) and len(x) == 2)[
        0
    ],
    "pt_map_is_leaf": lambda lib: P(lib).tree_map(
        len, [[1, 2], [3]], is_leaf=lambda x: isinstance(x, list) and len(x) < 3 and all(isinstance(i, int) for i in x)
    ),
    "pt_flatten_unhashable_keys_order": lambda lib: P(lib).tree_flatten({"z": 1, "a": {"y": 2, "b": 3}})[0],
    "ens_linear": _ens,
    "ens_batchnorm_train": _ens_bn,
    "ens_batchnorm_eval": _ens_bn_eval,
    "vm_linear_module": lambda lib: _vm_layer(lib, lambda lv: lv.nn.Linear(3, 2), (4, 3)),
    "vm_conv1d_module": lambda lib: _vm_layer(lib, lambda lv: lv.nn.Conv1d(2, 3, 2), (4, 2, 5)),
    "vm_layernorm_module": lambda lib: _vm_layer(lib, lambda lv: lv.nn.LayerNorm(3), (4, 2, 3)),
    "vm_embedding": lambda lib: (lambda m: lib.func.vmap(m)(lib.tensor([[0, 1], [2, 2]])))(
        (lib.manual_seed(0), lib.nn.Embedding(3, 2).double())[1]
    ),
    "vm_sequential": lambda lib: _vm_layer(
        lib, lambda lv: lv.nn.Sequential(lv.nn.Linear(3, 4), lv.nn.ReLU(), lv.nn.Linear(4, 1)), (4, 3)
    ),
    "vm_batchnorm_train_module": lambda lib: _vm_layer(lib, lambda lv: lv.nn.BatchNorm1d(3), (4, 2, 3)),
    "vm_dropout_module_eval": lambda lib: _vm_layer(lib, lambda lv: lv.nn.Dropout(0.5).eval(), (4, 3)),
    "vm_gru_cell": lambda lib: _vm_layer(lib, lambda lv: lv.nn.GRUCell(3, 2), (4, 1, 3)),
    "vmap_grad_functional_call": lambda lib: (
        lambda m: lib.func.vmap(
            lib.func.grad(lambda p, x: lib.func.functional_call(m, p, (x,)).sum()), in_dims=(None, 0)
        )({k: v.detach() for k, v in m.named_parameters()}, A(lib, 4, 3))
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
    "functional_call_strict": lambda lib: (
        lambda m: lib.func.functional_call(m, {"weight": A(lib, 2, 3)}, (A(lib, 1, 3),), strict=True)
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
    "functional_call_tie": lambda lib: (
        lambda m: lib.func.functional_call(m, {"weight": A(lib, 2, 3)}, (A(lib, 1, 3),), tie_weights=False)
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
    "functional_call_kwargs_dict": lambda lib: (
        lambda m: lib.func.functional_call(m, {"weight": A(lib, 2, 3)}, (), {"input": A(lib, 1, 3)})
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
    "functional_call_single_tensor_args": lambda lib: (
        lambda m: lib.func.functional_call(m, {"weight": A(lib, 2, 3)}, A(lib, 1, 3))
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
    "functional_call_dup_keys_tuple": lambda lib: (
        lambda m: lib.func.functional_call(m, ({"weight": A(lib, 2, 3)}, {"weight": A(lib, 2, 3)}), (A(lib, 1, 3),))
    )((lib.manual_seed(0), lib.nn.Linear(3, 2).double())[1]),
}


# the corners of the fixes above: promotion of 0-dim examples, in-place views, captured tensors, inference mode,
# data-dependent functionalize, batch norm statistics
EDGES = {
    "t_on_input": lambda lib: (lambda x: (V(lib)(lambda a: a.t_())(x), x.shape))(A(lib, 2, 3, 4)),
    "unsqueeze_then_mm": lambda lib: V(lib)(lambda a: a.unsqueeze_(0) @ A(lib, 3, 2))(A(lib, 2, 3).clone()),
    "squeeze_dim_": lambda lib: V(lib)(lambda a: a.clone().squeeze_(0))(A(lib, 2, 1, 3)),
    "squeeze_dims_": lambda lib: V(lib)(lambda a: a.clone().squeeze_((0, 2)))(A(lib, 2, 1, 3, 1)),
    "swapdims_": lambda lib: V(lib)(lambda a: a.clone().swapdims_(0, 1))(A(lib, 2, 3, 4)),
    "t_then_grad": lambda lib: V(lib)(F(lib).grad(lambda a: (a.clone().t_() @ A(lib, 3)).sum()))(A(lib, 2, 3, 3)),
    "grad_vmap_unsqueeze_": lambda lib: F(lib).grad(
        lambda w: V(lib)(lambda a: (a.clone().unsqueeze_(0) * w).sum())(A(lib, 2, 3))
    )(A(lib, 3)),
    "fill_batched_value_int": lambda lib: V(lib)(lambda a, v: a.clone().fill_(v))(A(lib, 2, 3), lib.tensor([1, 2])),
    "fill_batched_value_grad": lambda lib: (
        lambda v: lib.autograd.grad(V(lib)(lambda a, s: a.clone().fill_(s))(A(lib, 2, 3), v).sum(), v)
    )(A(lib, 2).requires_grad_()),
    "fill_unbatched_self_batched_value": lambda lib: V(lib)(lambda v: lib.zeros(3, dtype=lib.float64).fill_(v))(
        A(lib, 2)
    ),
    "fill_1d_value": lambda lib: V(lib)(lambda a, v: a.clone().fill_(v))(A(lib, 2, 3), A(lib, 2, 1)),
    "promo_f32_0dim_times_f64_vec": lambda lib: V(lib)(lambda s, b: s * b)(A(lib, 3, dt=lib.float32), A(lib, 3, 4)),
    "promo_0dim_both": lambda lib: V(lib)(lambda s, b: s + b, in_dims=(0, None))(
        A(lib, 3, dt=lib.float32), lib.tensor(1.5, dtype=lib.float64)
    ),
    "promo_int_0dim_bool_vec": lambda lib: V(lib)(lambda s, b: s + b, in_dims=(0, None))(
        A(lib, 3, dt=lib.int64), lib.tensor([True, False])
    ),
    "promo_cmp": lambda lib: V(lib)(lambda s, b: s < b, in_dims=(0, None))(
        A(lib, 3, dt=lib.float64), A(lib, 4, dt=lib.float32)
    ),
    "promo_where": lambda lib: V(lib)(lambda s, b: lib.where(b > 0, s, b), in_dims=(0, None))(
        A(lib, 3, dt=lib.float64), A(lib, 4, dt=lib.float32)
    ),
    "promo_add_alpha": lambda lib: V(lib)(lambda s, b: lib.add(b, s, alpha=2), in_dims=(0, None))(
        A(lib, 3, dt=lib.float64), A(lib, 4, dt=lib.float32)
    ),
    "promo_div_int": lambda lib: V(lib)(lambda s, b: b / s, in_dims=(0, None))(
        A(lib, 3, dt=lib.int64) + 5, A(lib, 4, dt=lib.int32)
    ),
    "promo_complex": lambda lib: V(lib)(lambda s, b: s * b, in_dims=(0, None))(
        A(lib, 3, dt=lib.float64), lib.complex(A(lib, 2, dt=lib.float32), A(lib, 2, dt=lib.float32))
    ),
    "promo_grad": lambda lib: (
        lambda s: lib.autograd.grad(
            V(lib)(lambda a, b: a * b, in_dims=(0, None))(s, A(lib, 4, dt=lib.float32)).sum(), s
        )
    )(A(lib, 3).requires_grad_()),
    "promo_inplace": lambda lib: V(lib)(lambda a, s: a.clone().mul_(s))(A(lib, 3, 4, dt=lib.float32), A(lib, 3)),
    "nonzero_unbatched_inside": lambda lib: V(lib)(lambda a: a + lib.nonzero(lib.tensor([0, 1, 1])).sum())(
        A(lib, 2, 3)
    ),
    "unique_error": lambda lib: V(lib)(lambda a: lib.unique(a))(A(lib, 2, 3)),
    "index_0dim_batched_setitem": lambda lib: V(lib)(
        lambda i: (lambda z: (z.__setitem__(i, 1.0), z)[1])(lib.zeros(3, dtype=lib.float64))
    )(lib.tensor([0, 2])),
    "index_0dim_batched_bool": lambda lib: V(lib)(lambda m: A(lib, 3)[m])(lib.tensor([True, False])),
    "index_0dim_batched_2d": lambda lib: V(lib)(lambda i, j: A(lib, 3, 4)[i, j])(
        lib.tensor([0, 2]), lib.tensor([1, 3])
    ),
    "index_0dim_batched_out_of_range": lambda lib: V(lib)(lambda i: A(lib, 3)[i])(lib.tensor([0, 5])),
    "index_0dim_unbatched_inside": lambda lib: V(lib)(lambda a: a[lib.tensor(1)])(A(lib, 2, 3)),
    "out_dims_tuple1_tuple_output": lambda lib: V(lib)(lambda a: (a,), out_dims=(1,))(A(lib, 2, 3)),
    "out_dims_list1_tensor": lambda lib: V(lib)(lambda a: a, out_dims=[1])(A(lib, 2, 3)),
    "out_dims_tuple2_tensor": lambda lib: V(lib)(lambda a: a, out_dims=(1, 0))(A(lib, 2, 3)),
    "out_unbatched_out_dims1_fits": lambda lib: V(lib)(lambda a: lib.ones(1, dtype=lib.float64), out_dims=1)(
        A(lib, 2, 3)
    ),
    "out_unbatched_out_dims1_square": lambda lib: V(lib)(lambda a: A(lib, 2, 2), out_dims=1)(A(lib, 2, 3)),
    "grad_fn_out_dim0": lambda lib: V(lib)(lambda a: a.exp())(A(lib, 2, 3).requires_grad_()).grad_fn.name(),
    "vmap_returns_input_is_alias": lambda lib: (lambda x: V(lib)(lambda a: a)(x) is x)(A(lib, 2, 3)),
    "randperm_different_n3_shape": lambda lib: sorted(
        V(lib)(lambda a: lib.randperm(3), randomness="different")(A(lib, 4, 2))[0].tolist()
    ),
    "randperm_different_seeded": lambda lib: (
        lib.manual_seed(0),
        V(lib)(lambda a: lib.randperm(5), randomness="different")(A(lib, 3, 2)),
    )[1],
    "rand_like_unbatched_different_seeded": lambda lib: (
        lib.manual_seed(0),
        V(lib)(lambda a: lib.rand_like(lib.ones(3)), randomness="different")(A(lib, 2, 2)),
    )[1],
    "randn_like_unbatched_different_seeded": lambda lib: (
        lib.manual_seed(0),
        V(lib)(lambda a: lib.randn_like(lib.ones(2, 2)), randomness="different")(A(lib, 3, 2)),
    )[1],
    "randint_like_unbatched_different_seeded": lambda lib: (
        lib.manual_seed(0),
        V(lib)(lambda a: lib.randint_like(lib.ones(3), 10), randomness="different")(A(lib, 2, 2)),
    )[1],
    "grad_inference_mode_input_outside": lambda lib: (
        lambda x: lib.inference_mode()(lambda: F(lib).grad(lambda a: (a * a).sum())(x))()
    )(A(lib, 3)),
    "grad_inference_mode_result_is_inference": lambda lib: lib.inference_mode()(
        lambda: F(lib).grad(lambda a: (a * a).sum())(A(lib, 3)).is_inference()
    )(),
    "jacrev_inference_mode": lambda lib: lib.inference_mode()(lambda: F(lib).jacrev(lambda a: a.sin())(A(lib, 3)))(),
    "vjp_inference_mode": lambda lib: lib.inference_mode()(
        lambda: F(lib).vjp(lambda a: a.sin(), A(lib, 3))[1](A(lib, 3))
    )(),
    "jvp_inference_mode": lambda lib: lib.inference_mode()(
        lambda: F(lib).jvp(lambda a: a.sin(), (A(lib, 3),), (A(lib, 3),))
    )(),
    "grad_no_grad_outer_value": lambda lib: lib.no_grad()(
        lambda: F(lib).grad_and_value(lambda a: (a * a).sum())(A(lib, 3))
    )(),
    "closure_captured_value_rg": lambda lib: (
        lambda c: [t.requires_grad for t in F(lib).grad_and_value(lambda a: (a * c).sum())(A(lib, 3))]
    )(A(lib, 3).requires_grad_()),
    "closure_captured_backprop": lambda lib: (
        lambda c: lib.autograd.grad(F(lib).grad(lambda a: (a * a * c).sum())(A(lib, 3)).sum(), c)
    )(A(lib, 3).requires_grad_()),
    "closure_captured_unrelated": lambda lib: (
        lambda c: F(lib).grad(lambda a: (a * a).sum() + c.sum() * 0)(A(lib, 3)).requires_grad
    )(A(lib, 3).requires_grad_()),
    "closure_captured_jacrev": lambda lib: (lambda c: F(lib).jacrev(lambda a: a * c)(A(lib, 3)).requires_grad)(
        A(lib, 3).requires_grad_()
    ),
    "closure_captured_vjp": lambda lib: (
        lambda c: F(lib).vjp(lambda a: a * c, A(lib, 3))[1](A(lib, 3))[0].requires_grad
    )(A(lib, 3).requires_grad_()),
    "closure_captured_jvp": lambda lib: (
        lambda c: [t.requires_grad for t in F(lib).jvp(lambda a: a * c, (A(lib, 3),), (A(lib, 3),))]
    )(A(lib, 3).requires_grad_()),
    "closure_captured_nested": lambda lib: (
        lambda c: F(lib).grad(lambda a: F(lib).grad(lambda b: (b * b * c).sum())(a).sum())(A(lib, 3)).requires_grad
    )(A(lib, 3).requires_grad_()),
    "closure_captured_grad_fn": lambda lib: (
        lambda c: F(lib).grad(lambda a: (a * c).sum())(A(lib, 3)).grad_fn is not None
    )(A(lib, 3).requires_grad_()),
    "closure_captured_output_itself": lambda lib: (
        lambda c: F(lib).grad_and_value(lambda a: (a * 0).sum() + c)(A(lib, 3))[1].requires_grad
    )(lib.tensor(2.0, dtype=lib.float64, requires_grad=True)),
    "grad_has_aux_tuple_aux": lambda lib: F(lib).grad(lambda a: (a.sum(), (a, a * 2)), has_aux=True)(A(lib, 3)),
    "grad_has_aux_list_with_int": lambda lib: F(lib).grad(lambda a: (a.sum(), [a, 1]), has_aux=True)(A(lib, 3)),
    "grad_and_value_aux_none": lambda lib: F(lib).grad_and_value(lambda a: (a.sum(), None), has_aux=True)(A(lib, 3)),
    "jacrev_aux_nontensor": lambda lib: F(lib).jacrev(lambda a: (a * 2, 3), has_aux=True)(A(lib, 3)),
    "jacfwd_aux_nontensor": lambda lib: F(lib).jacfwd(lambda a: (a * 2, 3), has_aux=True)(A(lib, 3)),
    "jvp_aux_nontensor": lambda lib: F(lib).jvp(lambda a: (a * 2, 3), (A(lib, 3),), (A(lib, 3),), has_aux=True),
    "vjp_cotangent_none": lambda lib: F(lib).vjp(lambda a: a * 2, A(lib, 3))[1](None),
    "vjp_cotangent_int_for_tuple": lambda lib: F(lib).vjp(lambda a: (a * 2, a), A(lib, 3))[1]((A(lib, 3), 1)),
    "jvp_empty_dict_primals": lambda lib: F(lib).jvp(lambda d: lib.ones(1), ({},), ({},)),
    "jvp_int_and_float_outputs": lambda lib: F(lib).jvp(lambda a: (a * 2, a.long(), a > 0), (A(lib, 3),), (A(lib, 3),)),
    "jacfwd_int_and_float": lambda lib: F(lib).jacfwd(lambda a: (a * 2, a.long()))(A(lib, 3)),
    "linearize_int_output": lambda lib: (lambda o, fn: fn(A(lib, 3)))(*F(lib).linearize(lambda a: a.long(), A(lib, 3))),
    "jacrev_zero_dim_argnums": lambda lib: F(lib).jacrev(lambda a, b: a * b, argnums=(0, 1))(
        lib.tensor(2.0, dtype=lib.float64), lib.tensor(3.0, dtype=lib.float64)
    ),
    "jacrev_zero_dim_in_vector_out": lambda lib: F(lib).jacrev(lambda a: a * A(lib, 3))(
        lib.tensor(2.0, dtype=lib.float64)
    ),
    "jacrev_vector_in_zero_dim_out": lambda lib: F(lib).jacrev(lambda a: a.sum())(A(lib, 3)),
    "jacfwd_zero_dim_in_vector_out": lambda lib: F(lib).jacfwd(lambda a: a * A(lib, 3))(
        lib.tensor(2.0, dtype=lib.float64)
    ),
    "jacrev_chunk_zero_dim": lambda lib: F(lib).jacrev(lambda a: a.exp(), chunk_size=2)(
        lib.tensor(1.0, dtype=lib.float64)
    ),
    "jacrev_chunk_empty_out": lambda lib: F(lib).jacrev(lambda a: a[:0], chunk_size=2)(A(lib, 3)),
    "jacrev_complex_second_arg": lambda lib: F(lib).jacrev(lambda a, b: a * 2)(
        A(lib, 3), lib.complex(A(lib, 2), A(lib, 2))
    ),
    "jacfwd_complex_out": lambda lib: F(lib).jacfwd(lambda a: a * 1j)(A(lib, 3)),
    "jacrev_bool_out": lambda lib: F(lib).jacrev(lambda a: a > 0)(A(lib, 3)),
    "hessian_complex": lambda lib: F(lib).hessian(lambda a: (a * a).sum())(lib.complex(A(lib, 2), A(lib, 2))),
    "jacfwd_random_different": lambda lib: F(lib).jacfwd(lambda a: a * (lib.rand(3) * 0 + 1), randomness="different")(
        A(lib, 3)
    ),
    "jacfwd_random_like_error": lambda lib: F(lib).jacfwd(lambda a: a * lib.rand_like(a))(A(lib, 3)),
    "jacfwd_dropout_error": lambda lib: F(lib).jacfwd(lambda a: lib.nn.functional.dropout(a, 0.5))(A(lib, 3)),
    "jacfwd_dropout_eval_ok": lambda lib: F(lib).jacfwd(lambda a: lib.nn.functional.dropout(a, 0.5, training=False))(
        A(lib, 3)
    ),
    "hessian_random_error": lambda lib: F(lib).hessian(lambda a: (a * lib.rand(3)).sum())(A(lib, 3)),
    "af_jac_vec_zero_dim_tuple": lambda lib: lib.autograd.functional.jacobian(
        lambda a, b: a * b, (lib.tensor(2.0, dtype=lib.float64), lib.tensor(3.0, dtype=lib.float64)), vectorize=True
    ),
    "af_hes_vec_zero_dim_create_graph": lambda lib: lib.autograd.functional.hessian(
        lambda a: a.exp(), lib.tensor(1.0, dtype=lib.float64), vectorize=True, create_graph=True
    ),
    "fz_kwargs_tensor_mutated": lambda lib: (
        lambda x, y: (F(lib).functionalize(lambda a, b=None: b.add_(a))(x, b=y), y)
    )(A(lib, 3), A(lib, 3)),
    "fz_kwargs_nontensor": lambda lib: F(lib).functionalize(lambda a, k=1: a * k)(A(lib, 3), k=3),
    "fz_data_dep_views": lambda lib: F(lib).functionalize(
        lambda a: a.t() if a.sum() > 0 else a, remove="mutations_and_views"
    )(A(lib, 2, 3) + 5),
    "fz_data_dep_mutation": lambda lib: (
        lambda x: (F(lib).functionalize(lambda a: a.mul_(2) if a.sum() > 0 else a)(x), x)
    )(A(lib, 3) + 5),
    "fz_item_scalar": lambda lib: F(lib).functionalize(lambda a: a * a.max().item())(A(lib, 3)),
    "fz_data_dep_random": lambda lib: (
        lib.manual_seed(0),
        F(lib).functionalize(lambda a: a + lib.rand(3) if a.sum() > 0 else a)(A(lib, 3) + 5),
    )[1],
    "bn_eval_under_vmap": lambda lib: (lambda m: lib.func.vmap(m)(A(lib, 4, 2, 3)))(
        (lib.manual_seed(0), lib.nn.BatchNorm1d(3).double().eval())[1]
    ),
    "bn_no_stats_under_vmap": lambda lib: (lambda m: lib.func.vmap(m)(A(lib, 4, 2, 3)))(
        (lib.manual_seed(0), lib.nn.BatchNorm1d(3, track_running_stats=False).double())[1]
    ),
    "bn_functional_training_unbatched_stats": lambda lib: lib.func.vmap(
        lambda x: lib.nn.functional.batch_norm(
            x, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64), training=True
        )
    )(A(lib, 4, 2, 3)),
    "bn_functional_training_batched_stats": lambda lib: (
        lambda rm: (
            lib.func.vmap(
                lambda x, m: (
                    lib.nn.functional.batch_norm(x, m, None, training=True)
                    if False
                    else lib.nn.functional.batch_norm(x, m, lib.ones(3, dtype=lib.float64) + m * 0, training=True)
                )
            )(A(lib, 4, 2, 3), rm),
            rm,
        )
    )(lib.zeros(4, 3, dtype=lib.float64)),
    "bn_running_stats_unchanged_after_error": lambda lib: (
        lambda m: (
            (lambda: None, [m.running_mean.tolist(), m.num_batches_tracked.item()])[1]
            if _try(lambda: lib.func.vmap(m)(A(lib, 4, 2, 3)))
            else None
        )
    )((lib.manual_seed(0), lib.nn.BatchNorm1d(3).double())[1]),
    "unfold_noncontiguous_example": lambda lib: V(lib)(lambda a: a.unfold(0, 2, 1))(A(lib, 3, 10)[:, 1:]),
    "unfold_last_dim_step": lambda lib: V(lib)(lambda a: a.unfold(-1, 3, 2))(A(lib, 3, 10)[:, 1:]),
    "unfold_too_big": lambda lib: V(lib)(lambda a: a.unfold(0, 12, 1))(A(lib, 3, 10)[:, 1:]),
    "as_strided_offset_given": lambda lib: V(lib)(lambda a: a.as_strided((2, 2), (1, 2), 1))(A(lib, 3, 10)[:, 1:]),
    "as_strided_default_offset": lambda lib: V(lib)(lambda a: a.as_strided((2, 2), (1, 2)))(A(lib, 3, 10)[:, 1:]),
    "vmap_grad_cumprod": lambda lib: V(lib)(F(lib).grad(lambda a: a.cumprod(1).sum()))(A(lib, 2, 3, 4)),
    "vmap_grad_cumprod_zeros": lambda lib: V(lib)(F(lib).grad(lambda a: a.cumprod(0).sum()))(
        lib.tensor([[1.0, 0.0, 2.0, 0.0], [0.5, 2.0, 0.0, 3.0], [1.0, 2.0, 3.0, 4.0]], dtype=lib.float64)
    ),
    "jacrev_cumprod_zeros": lambda lib: F(lib).jacrev(lambda a: a.cumprod(0))(
        lib.tensor([1.0, 0.0, 2.0, 0.0], dtype=lib.float64)
    ),
    "is_grads_batched_cumprod": lambda lib: (
        lambda x: G(lib)(x.cumprod(0), x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
    )(lib.tensor([2.0, 0.0, 3.0], dtype=lib.float64, requires_grad=True)),
    "is_grads_batched_cummax": lambda lib: (
        lambda x: G(lib)(x.cummax(1).values, x, lib.eye(12, dtype=lib.float64).view(12, 3, 4), is_grads_batched=True)
    )(A(lib, 3, 4).requires_grad_()),
    "vmap_grad_cummin": lambda lib: V(lib)(F(lib).grad(lambda a: a.cummin(0).values.sum()))(A(lib, 2, 3, 4)),
    "is_grads_batched_take": lambda lib: (
        lambda x: G(lib)(x.take(lib.tensor([0, 5, 11, 5])), x, lib.eye(4, dtype=lib.float64), is_grads_batched=True)
    )(A(lib, 3, 4).requires_grad_()),
    "vmap_grad_take": lambda lib: V(lib)(F(lib).grad(lambda a: a.take(lib.tensor([0, 5, 5])).sum()))(A(lib, 2, 3, 4)),
    "jvp_logcumsumexp": lambda lib: F(lib).jvp(lambda a: a.logcumsumexp(1), (A(lib, 3, 4),), (A(lib, 3, 4).flip(0),)),
    "jacfwd_logcumsumexp": lambda lib: F(lib).jacfwd(lambda a: a.logcumsumexp(0))(A(lib, 4)),
    "jacfwd_of_nonlinear_backward_detached": lambda lib: F(lib).jacfwd(lambda a: (a.logcumsumexp(0), a.cumprod(0)))(
        A(lib, 3)
    ),
    "vmap_linalg_qr_named": lambda lib: V(lib)(lambda a: lib.linalg.qr(a).R)(
        A(lib, 2, 3, 3).sin() + lib.eye(3, dtype=lib.float64) * 3
    ),
    "vmap_linalg_inv_ex_named": lambda lib: V(lib)(lambda a: lib.linalg.inv_ex(a).inverse)(
        A(lib, 2, 3, 3).sin() + lib.eye(3, dtype=lib.float64) * 3
    ),
    "vmap_linalg_lstsq_named": lambda lib: V(lib)(lambda a: lib.linalg.lstsq(a, a[:, :1]).solution)(
        A(lib, 2, 3, 3).sin() + lib.eye(3, dtype=lib.float64) * 3
    ),
    "vmap_linalg_slogdet_type": lambda lib: (
        type(V(lib)(lib.linalg.slogdet)(A(lib, 2, 3, 3).sin() + lib.eye(3, dtype=lib.float64) * 3)).__name__
    ),
    "vmap_linalg_eigh_named": lambda lib: V(lib)(lambda a: lib.linalg.eigh(a).eigenvalues)(
        (lambda s: s @ s.transpose(1, 2) + lib.eye(3, dtype=lib.float64))(A(lib, 2, 3, 3).sin())
    ),
    "vmap_linalg_svd_type": lambda lib: type(V(lib)(lib.linalg.svd)(A(lib, 2, 3, 3).sin())).__name__,
    "vmap_linalg_cholesky_ex_named": lambda lib: V(lib)(lambda a: lib.linalg.cholesky_ex(a).info)(
        (lambda s: s @ s.transpose(1, 2) + lib.eye(3, dtype=lib.float64))(A(lib, 2, 3, 3).sin())
    ),
    "vmap_grad_sigmoid_inplace": lambda lib: V(lib)(F(lib).grad(lambda a: a.clone().sigmoid_().sum()))(A(lib, 2, 4)),
    "vmap_grad_exp_inplace": lambda lib: V(lib)(F(lib).grad(lambda a: a.clone().exp_().sum()))(A(lib, 2, 4)),
    "vmap_grad_tanh_inplace_twice": lambda lib: V(lib)(F(lib).grad(lambda a: a.clone().tanh_().mul_(2).sum()))(
        A(lib, 2, 4)
    ),
    "vmap_grad_relu_inplace": lambda lib: V(lib)(F(lib).grad(lambda a: lib.relu_(a.clone()).sum()))(A(lib, 2, 4)),
    "vmap_grad_inplace_then_modified": lambda lib: V(lib)(
        F(lib).grad(lambda a: (lambda y: (y, y.add_(1))[0].sum())(a.clone().exp_()))
    )(A(lib, 2, 4)),
    "vmap_setitem_slice_batched_value": lambda lib: V(lib)(
        lambda a, v: (lambda c: (c.__setitem__(slice(1, 3), v), c)[1])(a.clone())
    )(A(lib, 2, 4), A(lib, 2, 2)),
    "vmap_setitem_batched_index": lambda lib: V(lib)(lambda a, i: (lambda c: (c.__setitem__(i, 0.0), c)[1])(a.clone()))(
        A(lib, 2, 4), lib.tensor([[0, 1], [2, 3]])
    ),
    "vmap_index_put_accumulate_dups": lambda lib: V(lib)(
        lambda a, v: a.clone().index_put_((lib.tensor([0, 0]),), v, accumulate=True)
    )(A(lib, 2, 4), A(lib, 2, 2)),
    "vmap_masked_scatter_": lambda lib: V(lib)(lambda a, s: a.clone().masked_scatter_(a > 0, s))(
        A(lib, 2, 4), A(lib, 2, 4) * 10
    ),
    "vmap_copy_into_batched_slice": lambda lib: V(lib)(lambda a, b: (a[1:3].copy_(b), a)[1])(
        A(lib, 2, 4).clone(), A(lib, 2, 2)
    ),
    "vmap_add_inplace_self_smaller": lambda lib: V(lib)(lambda a, b: a.clone().add_(b))(A(lib, 2, 4), A(lib, 2, 3, 4)),
    "vmap_div_inplace_int": lambda lib: V(lib)(lambda a: a.clone().div_(2))(A(lib, 2, 4, dt=lib.int64)),
    "vmap_inplace_on_view_of_input": lambda lib: (lambda x: (V(lib)(lambda a: a[:, 0].mul_(2))(x), x)[1])(
        A(lib, 2, 3, 4)
    ),
    "vmap_inplace_on_input_nested": lambda lib: (lambda x: (V(lib)(V(lib)(lambda a: a.mul_(3)))(x), x)[1])(
        A(lib, 2, 3, 2)
    ),
    "compose_grad_vmap_grad": lambda lib: F(lib).grad(
        lambda w: F(lib).vmap(F(lib).grad(lambda x: (x * w).sin().sum()))(A(lib, 3, 2)).sum()
    )(A(lib, 2)),
    "compose_jacrev_vmap": lambda lib: F(lib).jacrev(lambda w: F(lib).vmap(lambda x: (x * w).exp())(A(lib, 3, 2)))(
        A(lib, 2)
    ),
    "compose_jacfwd_vmap": lambda lib: F(lib).jacfwd(lambda w: F(lib).vmap(lambda x: (x * w).exp())(A(lib, 3, 2)))(
        A(lib, 2)
    ),
    "compose_vmap_jacfwd": lambda lib: F(lib).vmap(F(lib).jacfwd(lambda a: a.sin() * a.sum()))(A(lib, 3, 2)),
    "compose_vmap_hessian_in_dims": lambda lib: F(lib).vmap(
        F(lib).hessian(lambda a, b: (a * a * b).sum()), in_dims=(0, None)
    )(A(lib, 3, 2), A(lib, 2)),
    "compose_jvp_of_vmap": lambda lib: F(lib).jvp(
        lambda w: F(lib).vmap(lambda x: (x * w).sin())(A(lib, 3, 2)), (A(lib, 2),), (A(lib, 2) + 1,)
    ),
    "compose_vmap_jvp_batched_tangent": lambda lib: F(lib).vmap(
        lambda t: F(lib).jvp(lambda a: a.exp(), (A(lib, 2),), (t,))[1]
    )(A(lib, 3, 2)),
    "compose_vmap_vjp_fn_batched": lambda lib: (lambda out, fn: F(lib).vmap(fn)(A(lib, 3, 2)))(
        *F(lib).vjp(lambda a: a.sin(), A(lib, 2))
    ),
    "compose_vmap_linearize_fn": lambda lib: (lambda out, fn: F(lib).vmap(fn)(A(lib, 3, 2)))(
        *F(lib).linearize(lambda a: a.sin() * a, A(lib, 2))
    ),
    "compose_hessian_of_vmap_sum": lambda lib: F(lib).hessian(
        lambda w: F(lib).vmap(lambda x: (x * w).sin().sum())(A(lib, 3, 2)).sum()
    )(A(lib, 2)),
    "compose_grad_grad_vmap": lambda lib: F(lib).grad(
        F(lib).grad(lambda w: F(lib).vmap(lambda x: (x * w).sin().sum())(A(lib, 3)).sum())
    )(lib.tensor(0.5, dtype=lib.float64)),
    "compose_vmap_grad_argnums_tuple": lambda lib: F(lib).vmap(
        F(lib).grad(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))
    )(A(lib, 3, 2), A(lib, 3, 2)),
    "compose_vmap_grad_has_aux": lambda lib: F(lib).vmap(F(lib).grad(lambda a: ((a**2).sum(), a.max()), has_aux=True))(
        A(lib, 3, 2)
    ),
    "compose_vmap_grad_and_value_out_dims": lambda lib: F(lib).vmap(
        F(lib).grad_and_value(lambda a: (a**2).sum()), out_dims=(1, 0)
    )(A(lib, 3, 2)),
    "compose_vmap_jacrev_chunk": lambda lib: F(lib).vmap(F(lib).jacrev(lambda a: a.sin() * a.sum(), chunk_size=2))(
        A(lib, 3, 3)
    ),
    "compose_vmap_grad_nondiff_input_int": lambda lib: F(lib).vmap(
        F(lib).grad(lambda a, i: a[i].sum()), in_dims=(0, None)
    )(A(lib, 3, 4), lib.tensor([0, 2])),
    "compose_vmap_grad_in_dims_1": lambda lib: F(lib).vmap(F(lib).grad(lambda a: (a**3).sum()), in_dims=1)(
        A(lib, 2, 3)
    ),
    "compose_vmap_grad_chunk": lambda lib: F(lib).vmap(F(lib).grad(lambda a: (a**3).sum()), chunk_size=2)(A(lib, 5, 2)),
    "compose_vmap_vmap_grad": lambda lib: F(lib).vmap(F(lib).vmap(F(lib).grad(lambda a: a.sin().sum())))(
        A(lib, 2, 3, 2)
    ),
    "compose_vmap_grad_requires_grad_input": lambda lib: (
        F(lib).vmap(F(lib).grad(lambda a: (a**3).sum()))(A(lib, 3, 2).requires_grad_()).requires_grad
    ),
    "compose_vmap_grad_backprop_outer": lambda lib: (
        lambda x: lib.autograd.grad(F(lib).vmap(F(lib).grad(lambda a: (a**3).sum()))(x).sum(), x)
    )(A(lib, 3, 2).requires_grad_()),
    "compose_af_jacobian_of_vmap": lambda lib: lib.autograd.functional.jacobian(
        lambda w: F(lib).vmap(lambda x: (x * w).exp())(A(lib, 3, 2)), A(lib, 2)
    ),
    "compose_af_hessian_vectorize_nn": lambda lib: lib.autograd.functional.hessian(
        lambda w: (A(lib, 3, 2) @ w).tanh().sum(), A(lib, 2), vectorize=True
    ),
    "compose_af_hvp_create_graph": lambda lib: (
        lambda x: lib.autograd.grad(
            lib.autograd.functional.hvp(lambda a: (a**3).sum(), x, lib.ones(3, dtype=lib.float64), create_graph=True)[
                1
            ].sum(),
            x,
        )
    )(A(lib, 3).requires_grad_()),
    "compose_af_vjp_tuple_v_none": lambda lib: lib.autograd.functional.vjp(
        lambda a, b: (a * b).sum(), (A(lib, 3), A(lib, 3))
    ),
    "compose_af_jvp_strict_unused": lambda lib: lib.autograd.functional.jvp(
        lambda a, b: a * 2, (A(lib, 3), A(lib, 3)), (A(lib, 3), A(lib, 3)), strict=True
    ),
    "compose_af_vhp_tuple": lambda lib: lib.autograd.functional.vhp(
        lambda a, b: (a * a * b).sum(), (A(lib, 3), A(lib, 3)), (A(lib, 3), A(lib, 3))
    ),
}


def _seeded(lib, draw):
    lib.manual_seed(0)
    return draw()


def _random_programs():
    """Random operators under vmap, drawn from one seed: torch's streams, for one draw ('same') or
    one per example ('different'), chunked and nested too."""
    programs = {}
    for m in ("same", "different"):
        programs.update(
            {
                f"rand_{m}": lambda lib, m=m: V(lib)(lambda a: lib.rand(3), randomness=m)(A(lib, 4, 2)),
                f"randn_{m}": lambda lib, m=m: V(lib)(lambda a: lib.randn(2, 2, dtype=lib.float64), randomness=m)(
                    A(lib, 3, 2)
                ),
                f"randint_{m}": lambda lib, m=m: V(lib)(lambda a: lib.randint(0, 10, (3,)), randomness=m)(A(lib, 3, 2)),
                f"rand_like_{m}": lambda lib, m=m: V(lib)(lambda a: lib.rand_like(a), randomness=m)(A(lib, 3, 2)),
                f"randint_like_{m}": lambda lib, m=m: V(lib)(lambda a: lib.randint_like(a, 5), randomness=m)(
                    A(lib, 3, 2)
                ),
                f"dropout_{m}": lambda lib, m=m: V(lib)(lambda a: lib.nn.functional.dropout(a, 0.5), randomness=m)(
                    A(lib, 3, 4)
                ),
                f"bernoulli_unbatched_p_{m}": lambda lib, m=m: V(lib)(
                    lambda a: lib.bernoulli(lib.full((3,), 0.5)), randomness=m
                )(A(lib, 3, 4)),
                f"normal_unbatched_mean_std_{m}": lambda lib, m=m: V(lib)(
                    lambda a: lib.normal(lib.zeros(2), lib.ones(2)), randomness=m
                )(A(lib, 3, 4)),
                f"multinomial_unbatched_{m}": lambda lib, m=m: V(lib)(
                    lambda a: lib.multinomial(lib.ones(4), 2), randomness=m
                )(A(lib, 3, 4)),
                f"uniform_unbatched_inplace_{m}": lambda lib, m=m: V(lib)(
                    lambda a: lib.ones(3).uniform_(), randomness=m
                )(A(lib, 3, 4)),
                f"uniform__{m}": lambda lib, m=m: V(lib)(lambda a: a.clone().uniform_(), randomness=m)(A(lib, 3, 4)),
                f"normal__{m}": lambda lib, m=m: V(lib)(lambda a: a.clone().normal_(), randomness=m)(A(lib, 3, 4)),
                f"bernoulli__{m}": lambda lib, m=m: V(lib)(lambda a: a.clone().bernoulli_(0.5), randomness=m)(
                    A(lib, 3, 4)
                ),
                f"randperm_{m}": lambda lib, m=m: V(lib)(lambda a: lib.randperm(6), randomness=m)(A(lib, 3, 4)),
                f"multinomial_{m}": lambda lib, m=m: V(lib)(lambda a: lib.multinomial(a.softmax(0), 2), randomness=m)(
                    A(lib, 3, 4)
                ),
                f"normal_batched_mean_{m}": lambda lib, m=m: V(lib)(lambda a: lib.normal(a, 1.0), randomness=m)(
                    A(lib, 3, 4)
                ),
                f"nested_{m}": lambda lib, m=m: V(lib)(V(lib)(lambda a: lib.rand(2), randomness=m), randomness=m)(
                    A(lib, 3, 4)
                ),
                f"chunked_{m}": lambda lib, m=m: V(lib)(lambda a: lib.rand(2), randomness=m, chunk_size=2)(
                    A(lib, 5, 4)
                ),
                f"chunked_then_draw_{m}": lambda lib, m=m: (
                    V(lib)(lambda a: lib.rand(2), randomness=m, chunk_size=2)(A(lib, 5, 4)),
                    lib.rand(2),
                ),
                f"grad_dropout_{m}": lambda lib, m=m: V(lib)(
                    F(lib).grad(lambda a: lib.nn.functional.dropout(a, 0.5).sum()), randomness=m
                )(A(lib, 3, 4)),
            }
        )
    return {f"seeded_{k}": (lambda lib, p=p: _seeded(lib, lambda: p(lib))) for k, p in programs.items()}


RANDOM = _random_programs()

CASES = {**VMAP, **TRANSFORMS, **AUTOGRAD_AND_PYTREE, **EDGES, **RANDOM}
assert len(CASES) == len(VMAP) + len(TRANSFORMS) + len(AUTOGRAD_AND_PYTREE) + len(EDGES) + len(RANDOM)

# torch's layout here follows its implementation, which the API does not promise: its batched
# values keep the batch dim where it was (batch norm, jacfwd's columns; its linalg rules give column-major
# batches where the per-example loop here stacks), its Jacobians of
# constant outputs are expanded zeros
LAYOUT_FREE = {
    "bn_eval_under_vmap",
    "bn_functional_training_batched_stats",
    "bn_no_stats_under_vmap",
    "compose_af_hessian_vectorize_nn",
    "compose_vmap_hessian_in_dims",
    "ens_batchnorm_eval",
    "ens_batchnorm_train",
    "hessian_argnums_tuple",
    "hessian_empty",
    "hessian_int",
    "hessian_linear",
    "jacfwd_constant_out",
    "jacfwd_empty_out",
    "jacfwd_int_and_float",
    "jacfwd_int_out",
    "jacfwd_noncontig",
    "jacrev_constant_out",
    "jacrev_dict_out",
    "jacrev_vector_in_zero_dim_out",
    "jvp_noncontig_tangent",
    "vmap_grad_functional_call",
    "vmap_linalg_inv_ex_named",
    "vmap_linalg_lstsq_named",
    "vmap_linalg_qr_named",
}
# the same class, but torch's message names its own internals (C++ types, pytree specs, other sentences)
MESSAGE_FREE = {
    "bool_error",
    "chunk_size_bool",
    "chunk_size_ok_bad_out_dims_struct",
    "empty_example_max",
    "grad_argnums_dup_neg",
    "hes_vec_strict",
    "igb_no_batch_dim",
    "igb_noncontig_grad",
    "igb_none_scalar",
    "igb_wrong_batch_shape",
    "in_dims_list_for_tuple",
    "in_dims_too_long",
    "in_dims_tuple_for_list",
    "in_dims_wrong_len",
    "index_0dim_batched_out_of_range",
    "inplace_setitem_unbatched_target",
    "inplace_unbatched_copy_",
    "inplace_unbatched_self_mul_",
    "jac_vec_strict",
    "jacfwd_has_aux_bad",
    "jacrev_has_aux_bad",
    "jacrev_nontensor_out",
    "jvp_len_mismatch",
    "jvp_nontensor_output",
    "jvp_tangent_nontensor",
    "jvp_tangents_list",
    "linearize_wrong_count",
    "nested_inplace_inner_into_outer",
    "out_dims_list1_tensor",
    "out_dims_tuple2_tensor",
    "out_dims_tuple_wrong_len",
    "seeded_uniform_unbatched_inplace_different",
    "vjp_cotangent_list_for_tuple",
    "vjp_cotangent_tuple_for_single",
    "vjp_dict_output_wrong_keys",
    "vjp_nontensor_output",
    "vmap_grad_inplace_then_modified",
    "vmap_grad_tanh_inplace_twice",
}


# torch's forward-mode formula for logcumsumexp rounds differently from the double backward here
# (torch's own derivative of a lone element is 0.9999999999997): within 1e-11, not a few ulps
LOOSE = {"jvp_logcumsumexp", "jacfwd_logcumsumexp", "jacfwd_of_nonlinear_backward_detached"}


def _compare(ours, theirs, exact_layout, loose=False):
    if isinstance(theirs, torch.Tensor) and loose:
        assert_same(ours.detach(), theirs.detach(), exact_layout=exact_layout, rtol=1e-11, atol=1e-11)
        assert ours.requires_grad == theirs.requires_grad
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, internals.Tensor), (ours, theirs)
        if (theirs.dtype.is_floating_point or theirs.dtype.is_complex) and theirs.isfinite().all():
            assert_within_ulps_of_largest(ours.detach(), theirs.detach(), 16, exact_layout=exact_layout)
        elif theirs.dtype.is_floating_point or theirs.dtype.is_complex:
            assert_same(ours.detach(), theirs.detach(), exact_layout=exact_layout, ulps=16)
        else:
            assert_same(ours, theirs, exact_layout=exact_layout)
        assert ours.requires_grad == theirs.requires_grad
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__ and list(ours) == list(theirs), (ours, theirs)
        for key in theirs:
            _compare(ours[key], theirs[key], exact_layout, loose)
    elif isinstance(theirs, (list, tuple, collections.deque)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            _compare(o, t, exact_layout, loose)
    elif callable(theirs):  # vjp's and linearize's functions
        assert callable(ours)
    elif isinstance(theirs, torch.dtype):
        assert str(ours) == str(theirs).replace("torch.", "internals.")
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_program_as_torch(name):
    ours, theirs = outcome(CASES[name], internals), outcome(CASES[name], torch)
    if isinstance(theirs, tuple) and theirs[:1] == ("error",):
        assert ours[:2] == theirs[:2], (ours, theirs)
        if name not in MESSAGE_FREE:
            assert ours[2] == theirs[2].replace("torch.", "internals."), (ours, theirs)
    else:
        _compare(ours, theirs, exact_layout=name not in LAYOUT_FREE, loose=name in LOOSE)


THREADED = {
    "vmap": lambda: V(internals)(lambda a: (a.sin() * a).sum(-1))(A(internals, 8, 5)),
    "vmap_of_grad": lambda: V(internals)(F(internals).grad(lambda a: (a.exp() * a).sum()))(A(internals, 6, 4)),
    "jacrev": lambda: F(internals).jacrev(lambda a: a.sin() * a.sum())(A(internals, 4)),
    "jacfwd": lambda: F(internals).jacfwd(lambda a: a.sin() * a.sum())(A(internals, 4)),
    "hessian": lambda: F(internals).hessian(lambda a: (a**3).sum())(A(internals, 3)),
    "is_grads_batched": lambda: (
        lambda x: G(internals)(x.sin(), x, internals.eye(3, dtype=internals.float64), is_grads_batched=True)[0]
    )(A(internals, 3).requires_grad_()),
    "functionalize": lambda: F(internals).functionalize(lambda a: a.clone().mul_(2).add_(1))(A(internals, 4)),
    "nested_vmap": lambda: V(internals)(V(internals)(lambda a: a * 2))(A(internals, 3, 4)),
}


def test_two_threads_transform_at_once_as_one_alone():
    """Each thread's transforms keep their own levels and depth: the results are those of one
    thread running alone."""
    alone = {k: f().tolist() for k, f in THREADED.items()}
    names, wrong = list(THREADED), []

    def work(k):
        for i in range(2 * len(names)):
            name = names[(i + k) % len(names)]
            if THREADED[name]().tolist() != alone[name]:
                wrong.append(name)

    assert in_threads(work, n=2) == [] and wrong == []
