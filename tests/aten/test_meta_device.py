"""The meta device: tensors with sizes, strides and dtype and no data, compared with torch's.

Every program runs on both libraries; a tensor result is compared by its metadata (sizes,
strides, offset, dtype, device, grad_fn, repr), an error by its class and, where torch's meta
kernels word it as the CPU ones do, by its message."""
import threading
import warnings

import pytest
import torch
from helpers import in_threads, same_or_same_error

import internals


def meta(lib, *size, **kwargs):
    return lib.empty(*size, device="meta", **kwargs)


def describe(x):
    """What a result shows without data, with the library's name taken out of the text."""
    if isinstance(x, (tuple, list)):
        return [describe(v) for v in x]
    if not hasattr(x, "untyped_storage"):
        return x
    grad_fn = type(x.grad_fn).__name__ if x.grad_fn is not None else None
    text = repr(x).replace("internals.", "torch.")
    return (tuple(x.shape), x.stride(), x.storage_offset(), str(x.dtype).split(".")[-1], x.device.type,
            x.is_meta, grad_fn, x.requires_grad, text)


def index(lib, *size, dtype=None):
    return lib.empty(*size, dtype=dtype or lib.long, device="meta")


# name -> program(lib): each gives meta tensors (or other values) in torch
PROGRAMS = {
    "empty": lambda t: t.empty(2, 3, device="meta"),
    "zeros_int": lambda t: t.zeros(2, 3, device="meta", dtype=t.int64),
    "ones": lambda t: t.ones(2, 3, device="meta"),
    "full_int": lambda t: t.full((2,), 7, device="meta"),
    "rand": lambda t: t.rand(2, 3, device="meta"),
    "randn_f64": lambda t: t.randn(2, 3, device="meta", dtype=t.float64),
    "randint": lambda t: t.randint(0, 5, (3,), device="meta"),
    "arange": lambda t: t.arange(5, device="meta"),
    "arange_float": lambda t: t.arange(0, 1, 0.25, device="meta"),
    "tensor_list": lambda t: t.tensor([[1, 2], [3, 4]], device="meta"),
    "tensor_bool": lambda t: t.tensor([True], device="meta"),
    "empty_like": lambda t: t.empty_like(meta(t, 2, 3).t()),
    "zeros_like_from_cpu": lambda t: t.zeros_like(t.ones(2, 3), device="meta"),
    "empty_strided": lambda t: t.empty_strided((2, 3), (1, 2), device="meta"),
    "new_zeros": lambda t: meta(t, 2).new_zeros(3, dtype=t.int8),
    "storage": lambda t: (meta(t, 2, 3).data_ptr(), meta(t, 2, 3).untyped_storage().nbytes(),
                          meta(t, 2, 3).untyped_storage().device.type, meta(t, 4, 4)[1:].untyped_storage().nbytes()),
    "str_float16": lambda t: str(meta(t, 2, 3, dtype=t.float16)).replace("internals.", "torch."),
    "repr_requires_grad": lambda t: meta(t, 2, requires_grad=True),
    "repr_0d_and_empty": lambda t: (meta(t, ()), meta(t, 0)),
    "type_and_device_index": lambda t: (meta(t, 2).type().replace("internals.", "torch."), meta(t, 2).get_device()),
    # operators
    "broadcast_add": lambda t: meta(t, 2, 3) + meta(t, 3),
    "int_plus_float": lambda t: meta(t, 2, dtype=t.int32) + 1.5,
    "int32_times_float16": lambda t: meta(t, 2, dtype=t.int32) * meta(t, 2, dtype=t.float16),
    "int_true_divide": lambda t: meta(t, 2, dtype=t.int64) / meta(t, 2, dtype=t.int64),
    "compare": lambda t: meta(t, 2) < meta(t, 2),
    "sum_keepdim": lambda t: meta(t, 2, 3).sum(1, keepdim=True),
    "sum_int32": lambda t: meta(t, 2, 3, dtype=t.int32).sum(0),
    "max_dim": lambda t: tuple(meta(t, 2, 3).max(1)),
    "matmul": lambda t: meta(t, 2, 3) @ meta(t, 3, 4),
    "bmm": lambda t: t.bmm(meta(t, 5, 2, 3), meta(t, 5, 3, 4)),
    "linear": lambda t: t.nn.functional.linear(meta(t, 2, 3), meta(t, 4, 3), meta(t, 4)),
    "slice_of_slice": lambda t: meta(t, 4, 6)[1:, ::2][1:, 1],
    "permute": lambda t: meta(t, 2, 3, 4).permute(2, 0, 1),
    "transpose_contiguous": lambda t: meta(t, 2, 3, 4).transpose(0, 2).contiguous(),
    "expand": lambda t: meta(t, 3, 1).expand(3, 4),
    "reshape_copies": lambda t: meta(t, 2, 3).t().reshape(6),
    "select": lambda t: meta(t, 2, 3)[1],
    "index_meta": lambda t: meta(t, 5, 3)[index(t, 4)],
    "index_cpu_index": lambda t: meta(t, 5, 3)[t.tensor([0, 1])],
    "gather": lambda t: meta(t, 5, 3).gather(1, index(t, 5, 2)),
    "cat": lambda t: t.cat([meta(t, 2, 3), meta(t, 4, 3)]),
    "split": lambda t: meta(t, 5, 2).split(2),
    "softmax": lambda t: meta(t, 2, 3).softmax(-1),
    "conv2d": lambda t: t.nn.functional.conv2d(meta(t, 1, 3, 8, 8), meta(t, 4, 3, 3, 3), meta(t, 4), padding=1,
                                               stride=2),
    "layer_norm": lambda t: t.nn.functional.layer_norm(meta(t, 2, 5), (5,)),
    "dropout": lambda t: t.nn.functional.dropout(meta(t, 2, 3), 0.5, training=True),
    "cross_entropy": lambda t: t.nn.functional.cross_entropy(meta(t, 4, 5), index(t, 4)),
    "topk": lambda t: tuple(meta(t, 5).topk(2)),
    "clone_preserves_strides": lambda t: (meta(t, 2, 3).t().clone(),
                                          meta(t, 2, 3).t().clone(memory_format=t.contiguous_format)),
    "to_dtype": lambda t: meta(t, 3).to(t.float64),
    "cpu_to_meta": lambda t: t.ones(2, 3).t().to("meta"),
    "meta_to_meta_is_self": lambda t: (lambda a: a.to("meta") is a)(meta(t, 2)),
    "meta_with_cpu_scalar": lambda t: meta(t, 2) + t.tensor(1.0),
    "meta_matmul_cpu": lambda t: meta(t, 2, 3) @ t.ones(3, 4),
    # in place and out=
    "add_": lambda t: (lambda a: (a.add_(1) is a, a))(meta(t, 3)),
    "mul_on_view": lambda t: (lambda a: (a[1:].mul_(2)._version, a._version))(meta(t, 3)),
    "fills": lambda t: (lambda a: (a.zero_() is a, a.fill_(2) is a, a.uniform_() is a, a.normal_() is a))(meta(t, 3)),
    "out": lambda t: (lambda a, o: (t.add(a, a, out=o) is o, o))(meta(t, 3), meta(t, 3)),
    "out_resized": lambda t: (lambda a, o: (t.add(a, a, out=o) is o, o))(meta(t, 2, 3), meta(t, 0)),
    "copy_from_cpu": lambda t: (lambda a: (a.copy_(t.ones(3)) is a, a))(meta(t, 2, 3)),
    "resize_": lambda t: (lambda a: (a.resize_(4, 5), a.untyped_storage().nbytes()))(meta(t, 2)),
    "set_": lambda t: (lambda a: a.set_(meta(t, 6)))(meta(t, 2)),
}

# harder cases: views of views, out=, promotion, autograd and modules, copies and pickles
HOSTILE = {
    "one_hot_classes_given": lambda t: t.nn.functional.one_hot(meta(t, 2, 3, dtype=t.long), 4),
    "one_hot_no_classes": lambda t: t.nn.functional.one_hot(meta(t, 2, 3, dtype=t.long), 0),
    # torch's meta functions lay these out apart from its CPU kernels: Vh row-major, a fresh loss
    "svd_vh_row_major": lambda t: t.linalg.svd(meta(t, 2, 4, 3)),
    "svd_reduced_wide": lambda t: t.linalg.svd(meta(t, 3, 5, dtype=t.complex64), full_matrices=False),
    "svd_v": lambda t: t.svd(meta(t, 4, 3), some=False),
    "mse_loss_fresh_scalar": lambda t: (lambda loss: (loss, loss.untyped_storage().nbytes()))(
        t.nn.functional.mse_loss(meta(t, 4, 3), meta(t, 4, 3), reduction="sum")),
    "min_max_empty": lambda t: (meta(t, 0).min(), meta(t, 0, dtype=t.int32).max()),
    "min_max_empty_dim": lambda t: (*meta(t, 0, 3).min(0), *meta(t, 0, 3).max(-2, keepdim=True)),
    "mode_empty_dim": lambda t: tuple(meta(t, 3, 0).mode()),
    "amax_empty_kept_dim": lambda t: meta(t, 0, 3).amax(1),
    "argmax_empty_kept_dim": lambda t: meta(t, 0, 3).argmax(1, keepdim=True),
    "backward_0dim_cpu_gradient": lambda t: (lambda x: ((x * 2).backward(t.tensor(1.0)), x.grad)[1])(
        meta(t, (), requires_grad=True)),
    "view_chain": lambda t: meta(t, 4, 6)[1:][:, 2:].t()[1:, ::2].unsqueeze(0),
    "as_strided_of_view": lambda t: meta(t, 10)[2:].as_strided((2, 2), (1, 2), 1),
    "unfold": lambda t: meta(t, 10).unfold(0, 3, 2),
    "view_dtype": lambda t: meta(t, 4).view(t.int16),
    "view_shares_storage": lambda t: (lambda a: (a[1:]._base is a, a[1:].untyped_storage().nbytes()))(meta(t, 3)),
    "view_as_real": lambda t: t.view_as_real(meta(t, 3, dtype=t.complex128)),
    "channels_last_add": lambda t: meta(t, 2, 3, 4, 5).contiguous(memory_format=t.channels_last) + 1,
    "out_mm": lambda t: (lambda o: (t.mm(meta(t, 2, 3), meta(t, 3, 4), out=o) is o, o))(meta(t, 2, 4)),
    "out_sum_resized": lambda t: (lambda o: (t.sum(meta(t, 2, 3), 1, out=o), o))(meta(t, 0)),
    "out_cat_resized": lambda t: (lambda o: (t.cat([meta(t, 2), meta(t, 3)], out=o), o))(meta(t, 0)),
    "out_transposed": lambda t: (lambda o: (t.add(meta(t, 3, 2), 1, out=o), o))(meta(t, 2, 3).t()),
    "out_wider_dtype": lambda t: (lambda o: (t.add(meta(t, 3, dtype=t.int32), 1, out=o), o))(
        meta(t, 3, dtype=t.float64)),
    "promote_bool_int8": lambda t: meta(t, 3, dtype=t.bool) + meta(t, 3, dtype=t.int8),
    "promote_uint8_int8": lambda t: meta(t, 3, dtype=t.uint8) + meta(t, 3, dtype=t.int8),
    "promote_0dim_float64": lambda t: meta(t, 3, dtype=t.float16) + meta(t, (), dtype=t.float64),
    "promote_complex_number": lambda t: meta(t, 3, dtype=t.float64) * 1j,
    "promote_bfloat16_float16": lambda t: meta(t, 3, dtype=t.bfloat16) + meta(t, 3, dtype=t.float16),
    "int_floor_divide": lambda t: meta(t, 3, dtype=t.int32) // 2,
    "sum_bool": lambda t: meta(t, 3, dtype=t.bool).sum(),
    "abs_complex": lambda t: meta(t, 3, dtype=t.complex64).abs(),
    "sqrt_int": lambda t: meta(t, 3, dtype=t.int32).sqrt(),
    "where_promotes": lambda t: t.where(meta(t, 3, dtype=t.bool), meta(t, 3, dtype=t.int32),
                                        meta(t, 3, dtype=t.float16)),
    "cpu_scalar_first": lambda t: t.tensor(2.0) + meta(t, 3),
    "inplace_with_cpu_operand": lambda t: (meta(t, 3).mul_(t.ones(3)), t.ones(3).add_(meta(t, 3)).device.type),
    "cpu_index_put_meta_values": lambda t: (lambda a: (a.index_put_((t.tensor([0]),), meta(t, 1)) is a, a))(t.ones(3)),
    "setitem_cpu_values": lambda t: (lambda a: (a.__setitem__(0, t.ones(3)), a)[1])(meta(t, 2, 3)),
    "type_as": lambda t: (meta(t, 2).type_as(meta(t, 2, dtype=t.float64)),
                          t.ones(2).type_as(meta(t, 2, dtype=t.float64))),
    "to_meta_dtype": lambda t: t.ones(2, 3, dtype=t.int32).to("meta", t.float16),
    "to_meta_keeps_grad_fn": lambda t: t.ones(2, requires_grad=True).to("meta"),
    "grad_fn_of_views": lambda t: (lambda a: ((a * 2)[1:] ** 2).sum())(meta(t, 3, requires_grad=True)),
    "inplace_on_view_grad_fn": lambda t: (lambda b: (b[0].mul_(2), b)[1])(meta(t, 3, 2, requires_grad=True) * 1),
    "backward_fills_meta_grad": lambda t: (lambda a: ((a * a).sum().backward(), a.grad)[1])(
        meta(t, 3, requires_grad=True)),
    "scatter_add_": lambda t: meta(t, 4, 5).scatter_add_(0, index(t, 2, 5), meta(t, 2, 5)),
    "embedding_bag": lambda t: t.nn.functional.embedding_bag(index(t, 6), meta(t, 10, 3), index(t, 2)),
    "linalg_inv": lambda t: t.linalg.inv(meta(t, 3, 3)),
    "multinomial": lambda t: t.multinomial(meta(t, 4), 2),
    "randperm": lambda t: t.randperm(5, device="meta"),
    "bernoulli": lambda t: t.bernoulli(meta(t, 4)),
    "max_pool_indices": lambda t: t.nn.functional.max_pool2d(meta(t, 1, 2, 4, 4), 2, return_indices=True),
    "interpolate": lambda t: t.nn.functional.interpolate(meta(t, 1, 2, 4, 4), scale_factor=2),
    "lstm": lambda t: t.nn.LSTM(3, 4, device="meta")(meta(t, 5, 2, 3))[0],
    "transformer_layer": lambda t: t.nn.TransformerEncoderLayer(8, 2, 16, device="meta", dropout=0.0)(
        meta(t, 3, 2, 8)),
    "storage_resize": lambda t: (lambda s: (s.resize_(100), s.nbytes())[1])(meta(t, 2).untyped_storage()),
    "set_meta_storage": lambda t: meta(t, 0).set_(t.UntypedStorage(16, device="meta"), 1, (2,), (1,)),
    "deepcopy_view": lambda t: __import__("copy").deepcopy(meta(t, 2, 3)[1:]),
    "deepcopy_module": lambda t: __import__("copy").deepcopy(t.nn.Linear(2, 3, device="meta")).weight,
    "pickle_view": lambda t: __import__("pickle").loads(__import__("pickle").dumps(
        meta(t, 3, 4, requires_grad=True).detach().t()[1:].requires_grad_())),
}
PROGRAMS |= {f"hostile_{name}": program for name, program in HOSTILE.items()}

# name -> program(lib), which raises in torch: the same class and message here
REFUSED = {
    "cpu": lambda t: meta(t, 2).cpu(),
    "to_cpu": lambda t: meta(t, 2).to("cpu"),
    "tolist": lambda t: meta(t, 2).tolist(),
    "copy_into_cpu": lambda t: t.empty(2).copy_(meta(t, 2)),
    "item": lambda t: meta(t, ()).item(),
    "float": lambda t: float(meta(t, ())),
    "bool": lambda t: bool(meta(t, ())),
    "bool_of_two": lambda t: bool(meta(t, 2)),
    "numpy": lambda t: meta(t, 2).numpy(),
    "nonzero": lambda t: meta(t, 3).nonzero(),
    "mask_index": lambda t: meta(t, 5, 3)[index(t, 5, dtype=t.bool)],
    "masked_select": lambda t: meta(t, 3).masked_select(index(t, 3, dtype=t.bool)),
    "unique": lambda t: meta(t, 3).unique(),
    "equal": lambda t: t.equal(meta(t, 3), meta(t, 3)),
    "allclose": lambda t: t.allclose(meta(t, 3), meta(t, 3)),
    "meta_plus_cpu": lambda t: meta(t, 2) + t.ones(2),
    "cpu_plus_meta": lambda t: t.ones(2) + meta(t, 2),
    "cat_mixed": lambda t: t.cat([meta(t, 2), t.ones(2)]),
    "out_on_cpu": lambda t: t.add(meta(t, 3), meta(t, 3), out=t.empty(3)),
    "copy_wrong_shape": lambda t: meta(t, 2, 3).copy_(t.ones(4)),
    "view_of_transpose": lambda t: meta(t, 2, 3).t().view(6),
    "skip_init_needs_device": lambda t: t.nn.utils.skip_init(t.nn.ReLU),
    "meta_0dim_with_cpu": lambda t: meta(t, ()) + t.ones(3),
    "stack_mixed": lambda t: t.stack([meta(t, 2), t.ones(2)]),
    "where_mixed": lambda t: t.where(meta(t, 3, dtype=t.bool), t.ones(3), meta(t, 3)),
    "addcmul_mixed": lambda t: meta(t, 3).addcmul_(t.ones(3), t.ones(3)),
    "clamp_mixed": lambda t: meta(t, 3).clamp_(t.ones(3)),
    "out_mixed": lambda t: t.add(meta(t, 3), t.ones(3), out=meta(t, 3)),
    "type_as_cpu": lambda t: meta(t, 3).type_as(t.ones(1, dtype=t.float64)),
    "set_cpu_storage": lambda t: meta(t, 0).set_(t.UntypedStorage(16), 0, (2,), (1,)),
    "reshape_wrong_numel": lambda t: meta(t, 2, 3).reshape(4),
    "index_past_the_end": lambda t: meta(t, 2, 3)[5],
    # torch's meta kernels word these apart from its CPU kernels: its references' words, meta_mm's
    "broadcast": lambda t: meta(t, 2, 3) + meta(t, 4),
    "broadcast_where": lambda t: t.where(meta(t, 3, dtype=t.bool), meta(t, 4), meta(t, 3)),
    "broadcast_in_place": lambda t: meta(t, 2, 3).mul_(meta(t, 5, 1, 4)),
    "inplace_broadcast_grows": lambda t: meta(t, 3).add_(meta(t, 2, 3)),
    "matmul_sizes": lambda t: meta(t, 2, 3) @ meta(t, 4, 5),
    "linear_sizes": lambda t: t.nn.functional.linear(meta(t, 2, 3), meta(t, 4, 5)),
    "addmm_sizes": lambda t: t.addmm(meta(t, 2, 5), meta(t, 2, 3), meta(t, 4, 5)),
    "mv_sizes": lambda t: t.mv(meta(t, 2, 3), meta(t, 4)),
    "cat_sizes": lambda t: t.cat([meta(t, 0), meta(t, 2, 3), meta(t, 2, 4)]),
    "cat_sizes_dim": lambda t: t.cat([meta(t, 2, 3, 4), meta(t, 3, 5, 5)], -1),
    "cat_dims": lambda t: t.cat([meta(t, 2), meta(t, 2, 3, 4), meta(t, 2, 3)]),
    "cat_1d_not_empty": lambda t: t.cat([meta(t, 2, 3), meta(t, 3)]),
    # reductions without an identity of an empty tensor: torch's meta kernels decide apart from its CPU ones
    "amax_empty": lambda t: meta(t, 0).amax(),
    "amin_empty_dim": lambda t: meta(t, 0, 3).amin(-2),
    "aminmax_empty": lambda t: meta(t, 0, 3).aminmax(dim=0),
    "argmax_empty": lambda t: meta(t, 0).argmax(),
    "argmin_empty": lambda t: meta(t, 0, 3).argmin(keepdim=True),
    "argmin_empty_dim": lambda t: meta(t, 0, 3).argmin(-2),
    "kthvalue_empty": lambda t: meta(t, 3, 0).kthvalue(1),
    "topk_too_many": lambda t: meta(t, 3, 4).topk(5),
    "one_hot_classes_inferred": lambda t: t.nn.functional.one_hot(meta(t, 3, dtype=t.long)),
    # a gradient on another device than its output's, but a 0-dim one, which is moved
    "backward_cpu_gradient": lambda t: (meta(t, 3, requires_grad=True) * 2).backward(t.ones(3)),
    "grad_meta_gradient": lambda t: (lambda x: t.autograd.grad(x * 2, x, t.ones(3, device="meta")))(
        t.ones(3, requires_grad=True)),
    "second_root_gradient": lambda t: (lambda x: t.autograd.backward([x.sum(), x * 2], [t.ones(()), t.ones(3)]))(
        meta(t, 3, requires_grad=True)),
}

# torch's meta kernels word these differently from its CPU kernels: the class is compared
REFUSED_CLASS_ONLY = {
    "inplace_int_add_float": lambda t: meta(t, 3, dtype=t.int64).add_(1.5),
    "mean_of_int": lambda t: meta(t, 3, dtype=t.int64).mean(),
    "out_dtype_too_narrow": lambda t: t.add(meta(t, 3), meta(t, 3), out=meta(t, 3, dtype=t.int64)),
    "conv_channels": lambda t: t.nn.functional.conv2d(meta(t, 1, 3, 8, 8), meta(t, 4, 2, 3, 3)),
    "layer_norm_shape": lambda t: t.nn.functional.layer_norm(meta(t, 2, 5), (4,)),
    "storage_overflow": lambda t: meta(t, 2**62, 4),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_meta_results_match_torch(name):
    program = PROGRAMS[name]
    assert describe(program(internals)) == describe(program(torch))


@pytest.mark.parametrize("name", REFUSED)
def test_meta_refusals_match_torch(name):
    with pytest.raises(Exception) as theirs:
        REFUSED[name](torch)
    with pytest.raises(Exception) as ours:
        REFUSED[name](internals)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", REFUSED_CLASS_ONLY)
def test_meta_shape_errors_have_torchs_class(name):
    with pytest.raises(Exception) as theirs:
        REFUSED_CLASS_ONLY[name](torch)
    with pytest.raises(type(theirs.value)):
        REFUSED_CLASS_ONLY[name](internals)


def test_random_meta_factories_draw_no_numbers():
    before = internals.rand(3)
    internals.manual_seed(0)
    internals.rand(4, device="meta")
    meta(internals, 4).uniform_()
    first = internals.rand(3)
    internals.manual_seed(0)
    assert internals.equal(internals.rand(3), first) and before.shape == first.shape


def autograd_program(t):
    w = t.empty(4, 3, device="meta", requires_grad=True)
    y = t.nn.functional.linear(t.empty(2, 3, device="meta"), w).relu().sum()
    y.backward()
    z = (w * 2).exp().mean(0)
    g, = t.autograd.grad(z.sum(), w, create_graph=True)
    g2, = t.autograd.grad(g.sum(), w)
    return y, w.grad, z, g, g2


def test_autograd_on_meta_matches_torch():
    assert describe(autograd_program(internals)) == describe(autograd_program(torch))


def module_program(t):
    nn = t.nn
    lin = nn.Linear(3, 4, device="meta")
    nn.init.kaiming_uniform_(lin.weight)            # initializers do nothing on meta
    out = lin(t.empty(2, 3, device="meta"))
    seq = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).to("meta")
    seq_out = seq(t.empty(1, 3, 8, 8, device="meta"))
    seq_params = describe(list(seq.parameters())[:2])
    moved = [(p.device.type, type(p).__name__) for p in seq.to_empty(device="cpu").parameters()]
    skipped = nn.utils.skip_init(nn.Linear, 3, 4)
    skipped_meta = nn.utils.skip_init(nn.Linear, 3, 4, device="meta")
    own = nn.Linear(2, 2, device="meta").to_empty(device="cpu", recurse=False)
    return (lin.weight, out, seq_params, seq_out, moved, seq[1].running_mean.device.type,
            skipped.weight.device.type, type(skipped.bias).__name__, skipped_meta.weight, own.weight.device.type)


def test_modules_on_meta_match_torch():
    assert describe(module_program(internals)) == describe(module_program(torch))


def test_default_device_meta_matches_torch():
    def program(t):
        with t.device("meta"):
            inside = (t.ones(2), t.nn.Linear(2, 2).weight.device.type)
        t.set_default_device("meta")
        try:
            default = (t.zeros(2), t.arange(3), t.tensor([1.0]))
        finally:
            t.set_default_device(None)
        return inside, default, t.zeros(1).device.type
    assert describe(program(internals)) == describe(program(torch))


def test_load_state_dict_between_meta_and_cpu_matches_torch():
    def program(t):
        with pytest.raises(RuntimeError) as error:
            t.nn.Linear(2, 2).load_state_dict(t.nn.Linear(2, 2, device="meta").state_dict())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            into_meta = t.nn.Linear(2, 2, device="meta")
            into_meta.load_state_dict(t.nn.Linear(2, 2).state_dict())
        assigned = t.nn.Linear(2, 2, device="meta")
        assigned.load_state_dict(t.nn.Linear(2, 2).state_dict(), assign=True)
        return (str(error.value).replace("internals.", "torch."), [str(w.message) for w in caught],
                into_meta.weight.device.type, assigned.weight.device.type)
    assert program(internals) == program(torch)


def test_meta_operators_on_threads():
    shapes, lock = [], threading.Lock()

    def work(k):
        x = internals.empty(3, k + 1, device="meta")
        y = (x @ x.t()).softmax(-1)
        with lock:
            shapes.append((k, tuple(y.shape), y.device.type))
    assert in_threads(work) == []
    assert sorted(shapes) == [(k, (3, 3), "meta") for k in range(4)]


# Errors torch's meta functions and Python references word otherwise than its CPU kernels: the
# meta device gives torch's meta wording (class and message).
META_WORDING = {
    "mean_of_integers": lambda lib: meta(lib, 3, dtype=lib.int64).mean(),
    "mean_of_bools_over_a_dim": lambda lib: meta(lib, 3, 4, dtype=lib.bool).mean(0),
    "add_out_cannot_hold_the_result": lambda lib: lib.add(meta(lib, 3), meta(lib, 3),
                                                          out=meta(lib, 3, dtype=lib.int64)),
    "complex_into_a_float_out": lambda lib: lib.add(meta(lib, 3, dtype=lib.complex64), meta(lib, 3), out=meta(lib, 3)),
    "unary_out_cannot_hold_the_result": lambda lib: lib.exp(meta(lib, 3), out=meta(lib, 3, dtype=lib.int64)),
    "neg_out_of_another_dtype": lambda lib: lib.neg(meta(lib, 3), out=meta(lib, 3, dtype=lib.int64)),
    "abs_out_of_another_dtype": lambda lib: lib.abs(meta(lib, 3), out=meta(lib, 3, dtype=lib.int64)),
    "where_out_of_another_dtype": lambda lib: lib.where(meta(lib, 3, dtype=lib.bool), meta(lib, 3), meta(lib, 3),
                                                        out=meta(lib, 3, dtype=lib.int64)),
    "clamp_in_place_of_integers": lambda lib: meta(lib, 3, dtype=lib.int64).clamp_(0.5),
    "div_in_place_of_integers": lambda lib: meta(lib, 3, dtype=lib.int64).div_(meta(lib, 3)),
    "exp_in_place_of_integers": lambda lib: meta(lib, 3, dtype=lib.int64).exp_(),
    "int_add_float_in_place": lambda lib: meta(lib, 3, dtype=lib.int64).add_(meta(lib, 3)),
    "int_sub_float_number_in_place": lambda lib: meta(lib, 3, dtype=lib.int64).sub_(1.5),
    "bool_add_in_place": lambda lib: meta(lib, 3, dtype=lib.bool).add_(meta(lib, 3, dtype=lib.int64)),
    "int32_add_int64_in_place": lambda lib: describe(meta(lib, 3, dtype=lib.int32).add_(meta(lib, 3, dtype=lib.int64))),
    "conv2d_channels": lambda lib: lib.nn.functional.conv2d(meta(lib, 1, 3, 5, 5), meta(lib, 4, 2, 3, 3)),
    "conv1d_channels_with_groups": lambda lib: lib.nn.functional.conv1d(meta(lib, 1, 4, 5), meta(lib, 4, 3, 3),
                                                                        groups=2),
    "conv2d_rank": lambda lib: lib.nn.functional.conv2d(meta(lib, 3, 5), meta(lib, 4, 3, 3, 3)),
    "layer_norm_shape": lambda lib: lib.nn.functional.layer_norm(meta(lib, 2, 3, 4), (3,)),
    "layer_norm_two_dims": lambda lib: lib.nn.functional.layer_norm(meta(lib, 2, 3, 4), (5, 4)),
    "layer_norm_weight": lambda lib: lib.nn.functional.layer_norm(meta(lib, 2, 3, 4), (4,), weight=meta(lib, 3)),
    "layer_norm_bias": lambda lib: lib.nn.functional.layer_norm(meta(lib, 2, 3, 4), (4,), bias=meta(lib, 2)),
    "layer_norm_fits": lambda lib: describe(lib.nn.functional.layer_norm(meta(lib, 2, 3, 4), (3, 4),
                                                                         weight=meta(lib, 3, 4))),
    "empty_past_int64_elements": lambda lib: lib.empty(2**62, 4, device="meta"),
    "empty_past_int64_bytes": lambda lib: lib.empty(2**62, device="meta", dtype=lib.float64),
    "zeros_past_int64": lambda lib: lib.zeros(2**31, 2**31, 2**10, device="meta"),
    "full_past_int64": lambda lib: lib.full((2**62, 8), 1.0, device="meta"),
    "new_empty_past_int64": lambda lib: meta(lib, 1).new_empty((2**62, 8)),
    "empty_strided_past_int64_elements": lambda lib: lib.empty_strided((2**40, 2**40), (2**40, 1), device="meta"),
    "as_strided_past_int64_elements": lambda lib: meta(lib, 4).as_strided((2**40, 2**40), (2**40, 1)),
    "expand_past_int64_elements": lambda lib: meta(lib, 1).expand(2**40, 2**40),
    # mul_ and the logical in-place operators: torch's meta function checks the shapes only, so
    # an integer tensor takes a float on meta, which the CPU kernel refuses
    "int_mul_float_number_in_place": lambda lib: describe(meta(lib, 3, dtype=lib.int64).mul_(2.5)),
    "int_mul_float_in_place": lambda lib: describe(meta(lib, 3, dtype=lib.int64).mul_(meta(lib, 3))),
    "int_mul_cpu_float_in_place": lambda lib: describe(meta(lib, 3, dtype=lib.int64).mul_(lib.ones(3))),
    "bool_logical_and_float_in_place": lambda lib: describe(meta(lib, 3, dtype=lib.bool).logical_and_(meta(lib, 3))),
    "mul_in_place_broadcast_beyond_self": lambda lib: meta(lib, 3).mul_(meta(lib, 2, 3)),
    "mul_in_place_shapes_mismatch": lambda lib: meta(lib, 3).mul_(meta(lib, 2)),
    "int_div_number_in_place": lambda lib: meta(lib, 3, dtype=lib.int64).div_(2),
    # as_strided on meta: no storage bytes to stay within (torch's meta kernel checks none)
    "as_strided_past_the_storage": lambda lib: describe(meta(lib, 3).as_strided((10,), (1,))),
    "as_strided_offset_past_the_storage": lambda lib: describe(meta(lib, 3).as_strided((2,), (1,), 5)),
    "as_strided_of_a_view_past_the_storage": lambda lib: describe(meta(lib, 3)[1:].as_strided((20,), (1,))),
    "as_strided_negative_stride": lambda lib: meta(lib, 3).as_strided((2,), (-1,)),
    "as_strided_negative_offset": lambda lib: meta(lib, 3).as_strided((2,), (1,), -1),
    "as_strided_in_place_past_the_storage": lambda lib: meta(lib, 3).as_strided_((20,), (1,)),
    "contiguous_of_as_strided_past_the_storage": lambda lib: describe(
        meta(lib, 3).as_strided((4, 5), (1, 4)).contiguous()),
}


@pytest.mark.parametrize("case", META_WORDING)
def test_meta_errors_are_worded_as_torchs_meta_functions(case):
    same_or_same_error(META_WORDING[case])
