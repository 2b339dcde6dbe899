"""Hostile input to ``torch.func``'s transforms: odd ``in_dims``/``out_dims``, empty batches,
non-callables, outputs that are not tensors, integer and mis-shaped tangents, empty inputs to
the Jacobians. Each gives torch's result or raises torch's class (and message where it is the
same sentence)."""
import pytest
import torch
from helpers import outcome

import internals


def _shape(t):
    return tuple(t.shape)


CASES = {
    "bool_in_dim": lambda lib: lib.func.vmap(lambda a: a * 2, in_dims=True)(lib.ones(2, 3)),
    "empty_batch_reduction": lambda lib: _shape(lib.func.vmap(lambda a: a.sum())(lib.ones(0, 3))),
    "empty_batch_fallback_tuple": lambda lib: [_shape(t) for t in lib.func.vmap(lambda a: (a.sum(), a[0]))(
        lib.ones(0, 3))],
    "empty_batch_pointwise": lambda lib: _shape(lib.func.vmap(lambda a: a.exp())(lib.ones(0, 3))),
    "not_callable": lambda lib: lib.func.vmap(3)(lib.ones(2)),
    "in_dims_float": lambda lib: lib.func.vmap(lambda a: a, in_dims=0.0)(lib.ones(2)),
    "in_dims_tuple_float": lambda lib: lib.func.vmap(lambda a: a, in_dims=(0.5,))(lib.ones(2)),
    "out_dims_str": lambda lib: lib.func.vmap(lambda a: a, out_dims="x")(lib.ones(2)),
    "out_dims_out_of_range": lambda lib: lib.func.vmap(lambda a: a, out_dims=5)(lib.ones(2)),
    "zero_dim_input": lambda lib: lib.func.vmap(lambda a: a)(lib.tensor(1.0)),
    "none_output": lambda lib: lib.func.vmap(lambda a: None)(lib.ones(2)),
    "grad_none_output": lambda lib: lib.func.grad(lambda a: None)(lib.ones(2)),
    "grad_argnums_bool": lambda lib: lib.func.grad(lambda a, b: (a * b).sum(), argnums=True)(lib.ones(2), lib.ones(2)),
    "grad_keyword_argument": lambda lib: lib.func.grad(lambda a, k: (a * k).sum())(lib.ones(2), k=lib.ones(2) * 3),
    "jacrev_empty_input": lambda lib: _shape(lib.func.jacrev(lambda a: a * 2)(lib.ones(0))),
    "jacfwd_empty_input": lambda lib: _shape(lib.func.jacfwd(lambda a: a * 2)(lib.ones(0))),
    "vjp_cotangent_shape": lambda lib: lib.func.vjp(lambda a: a * 2, lib.ones(3))[1](lib.ones(2)),
    "jvp_tangent_shape": lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(2),)),
    "jvp_integer_tangent": lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(3, dtype=lib.long),)),
    "jvp_integer_primal": lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3, dtype=lib.long),),
                                                   (lib.ones(3, dtype=lib.long),)),
    "chunk_size_one": lambda lib: _shape(lib.func.vmap(lambda a: a.sum(), chunk_size=1)(lib.ones(3, 2))),
    "list_output": lambda lib: type(lib.func.vmap(lambda a: [a, a])(lib.ones(3, 2))).__name__,
    "dict_in_dims_keys_differ": lambda lib: lib.func.vmap(lambda d: d["a"], in_dims=({"b": 0},))({"a": lib.ones(2)}),
    "grad_of_integer_under_vmap": lambda lib: lib.func.vmap(lib.func.grad(lambda a: a.sum()))(
        lib.ones(2, 2, dtype=lib.long)),
    "stack_module_state_buffers": lambda lib: [sorted(x) for x in lib.func.stack_module_state(
        [lib.nn.BatchNorm1d(2), lib.nn.BatchNorm1d(2)])],
    # operators with batching rules: out-of-range indices and mismatched shapes raise what torch's rules raise
    "index_out_of_range": lambda lib: lib.func.vmap(lambda a, i: a[i])(lib.ones(2, 3), lib.tensor([[0, 5], [1, 1]])),
    "gather_out_of_range": lambda lib: lib.func.vmap(lambda a, i: a.gather(0, i))(lib.ones(2, 3),
                                                                                  lib.tensor([[0, 5], [1, 1]])),
    "embedding_negative_index": lambda lib: lib.func.vmap(lambda w, i: lib.nn.functional.embedding(i, w))(
        lib.ones(2, 3, 2), lib.tensor([[0, -1], [1, 1]])),
    "nll_loss_target_out_of_range": lambda lib: lib.func.vmap(lib.nn.functional.nll_loss)(
        lib.ones(2, 2, 3), lib.tensor([[0, 5], [1, 1]])),
    "conv2d_channels_differ": lambda lib: lib.func.vmap(lib.nn.functional.conv2d)(lib.ones(2, 1, 2, 4, 4),
                                                                                  lib.ones(2, 3, 3, 2, 2)),
    "conv2d_empty_batch": lambda lib: lib.func.vmap(lib.nn.functional.conv2d)(lib.ones(0, 1, 2, 4, 4),
                                                                              lib.ones(0, 3, 2, 2, 2)),
    "max_pool2d_empty_batch": lambda lib: _shape(lib.func.vmap(lambda a: lib.nn.functional.max_pool2d(a, 2))(
        lib.ones(0, 1, 4, 4))),
    "embedding_index_past_its_table": lambda lib: lib.func.vmap(lib.nn.functional.embedding)(
        lib.tensor([[0, 3], [1, 1]]), lib.arange(12.0).reshape(2, 3, 2)),
}
SAME_MESSAGE_NOT_EXPECTED = {"dict_in_dims_keys_differ", "not_callable"}     # torch prints its TreeSpec, its C++ names


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_transform_input_as_torch(name):
    ours, theirs = outcome(CASES[name], internals), outcome(CASES[name], torch)
    if isinstance(theirs, tuple) and theirs[:1] == ("error",):
        assert ours[:2] == theirs[:2], (ours, theirs)
        if name not in SAME_MESSAGE_NOT_EXPECTED:
            assert ours[2] == theirs[2].replace("torch.", "internals."), (ours, theirs)
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, internals.Tensor) and ours.tolist() == theirs.tolist()
    else:
        assert ours == theirs
