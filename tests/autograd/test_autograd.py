"""Differential tests of autograd against torch: gradients of every differentiable operator on
PyTorch's OpInfo samples, graph structure (grad_fn names, next_functions, saved attributes),
second-order gradients, in-place rules and their errors, hooks, retain_grad, random graphs."""

import functools
import sys

import hypothesis
import hypothesis.strategies as st
import pytest
import torch
from helpers import ADAPTERS, OPINFOS, Unsupported, assert_same, opinfo_samples, to_ours

import internals

NOT_DIFFERENTIABLE = {"eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin"}
GRAD_OPS = [name for name in ADAPTERS if name not in NOT_DIFFERENTIABLE]


# matmul decomposes into mm with views in internals, into dot/mv/mm/bmm with views in torch.
# "fill" and "zero_" run torch.fill / zero_ in torch (FillBackward0, ZeroBackward0), clone().fill_ here.
GRAPH_DIFFERS = {"matmul", "fill", "zero_"}


def assert_same_graph(ours, theirs, seen=None):
    """Walk both graphs from the grad_fn, comparing node names and the edges' input numbers."""
    seen = set() if seen is None else seen
    if theirs is None or id(theirs) in seen:
        assert (ours is None) == (theirs is None)
        return
    seen.add(id(theirs))
    assert theirs.name() == ours.name()
    if theirs.name() == "UnsafeViewBackward0":    # torch: clone, _unsafe_view; internals: clone, view
        return
    theirs_next, ours_next = theirs.next_functions, ours.next_functions
    assert [i for _, i in ours_next] == [i for _, i in theirs_next], (ours.name(), ours_next, theirs_next)
    for (o, _), (t, _) in zip(ours_next, theirs_next):
        assert_same_graph(o, t, seen)


def _requiring_grad(value, lib):
    """Float tensors of a sample made leaves that require grad (a fresh copy per library)."""
    if isinstance(value, (torch.Tensor, internals.Tensor)) and value.dtype.is_floating_point:
        if lib is torch:
            return value.detach().clone().requires_grad_(True)
        return value.clone().detach().requires_grad_(True)
    if isinstance(value, (list, tuple)):
        return type(value)(_requiring_grad(v, lib) for v in value)
    return value


def _leaves(value):
    if isinstance(value, (torch.Tensor, internals.Tensor)):
        return [value] if value.requires_grad else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _leaves(v)]
    return []


def _outputs(result):
    if isinstance(result, (torch.Tensor, internals.Tensor)):
        return [result]
    return [t for t in result if isinstance(t, (torch.Tensor, internals.Tensor))]


def _loss(outputs, lib):
    """A weighted sum of the differentiable outputs: each element's gradient differs."""
    total = None
    for out in outputs:
        if not out.requires_grad:
            continue
        n = out.numel()
        weights = lib.arange(n, dtype=out.dtype).reshape(out.shape) / max(n, 1) + 0.5
        term = (out * weights).sum()
        total = term if total is None else total + term
    return total


def run_gradient_sample(name, sample):
    op, adapter = OPINFOS[name], ADAPTERS[name]
    x, args, kwargs = sample.input, sample.args, sample.kwargs
    if set(kwargs) - set(adapter.kwargs):
        raise Unsupported("keyword")
    ours_in = (to_ours(x), to_ours(tuple(args)), {k: to_ours(v) for k, v in kwargs.items()})
    theirs_x, theirs_args = _requiring_grad(x, torch), _requiring_grad(tuple(args), torch)
    ours_x, ours_args = _requiring_grad(ours_in[0], internals), _requiring_grad(ours_in[1], internals)
    try:
        theirs = op.op(theirs_x, *theirs_args, **kwargs)
    except Exception as e:
        raise Unsupported("torch raises") from e
    ours = adapter.ours(ours_x, *ours_args, **ours_in[2])
    theirs_out, ours_out = _outputs(theirs), _outputs(ours)
    assert [t.requires_grad for t in ours_out] == [t.requires_grad for t in theirs_out]
    for o, t in zip(ours_out, theirs_out):
        if name not in GRAPH_DIFFERS:
            assert_same_graph(o.grad_fn, t.grad_fn)
    theirs_loss = _loss(theirs_out, torch)
    if theirs_loss is None:
        return
    theirs_loss.backward()
    _loss(ours_out, internals).backward()
    for o, t in zip(_leaves((ours_x, ours_args)), _leaves((theirs_x, theirs_args))):
        assert (o.grad is None) == (t.grad is None)
        if t.grad is not None:
            internals.testing.check(o.grad, t.grad, exact_layout=False, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", GRAD_OPS)
def test_opinfo_gradients(name):
    """float64 gradients of every sample equal torch's, and the graphs have torch's nodes."""
    ran = 0
    for sample in opinfo_samples(OPINFOS[name], torch.float64):
        try:
            run_gradient_sample(name, sample)
        except Unsupported:
            continue
        except AssertionError as e:
            raise AssertionError(f"{name}: input {tuple(sample.input.shape)}, args {sample.args!r}, "
                                 f"kwargs {sample.kwargs!r}\n{e}") from e
        ran += 1
    assert ran > 0


def _nodes(out):
    """The names of every node reachable from ``out``'s grad_fn."""
    names, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node.name() not in names:
            names.add(node.name())
            stack += [n for n, _ in node.next_functions]
    return names


def test_every_derivative_entry_is_tested():
    """Each node class the codegen made is reached by some OpInfo sample above, or by a gradient case
    of test_ops_shape_index.py / test_ops_math.py (which compare grad_fn names and gradients with torch)."""
    from test_ops_math import GRAD_CASES as MATH_GRAD_CASES
    from test_ops_math import _x
    from test_shape_and_indexing_ops import GRAD_CASES

    from internals.autograd.generated import functions
    reached = set()
    for name in GRAD_OPS:
        for sample in list(opinfo_samples(OPINFOS[name], torch.float64))[:3]:
            try:
                x = _requiring_grad(to_ours(sample.input), internals)
                args = _requiring_grad(to_ours(tuple(sample.args)), internals)
                out = ADAPTERS[name].ours(x, *args, **{k: to_ours(v) for k, v in sample.kwargs.items()})
            except Exception:
                continue
            for t in _outputs(out):
                reached |= _nodes(t)
    # The Scalar overloads torch's Python binding picks for a Python number: x ** 2.5, 2 ** x, 1 - x.
    for program in (lambda x: x ** 2.5, lambda x: 2 ** x, lambda x: 1 - x):
        reached.add(program(internals.tensor([1.5, 2.0], requires_grad=True)).grad_fn.name())
    # Random fills have no OpInfo that compares values (test_random.py checks them and their nodes).
    for fill in (lambda y: y.uniform_(), lambda y: y.normal_(), lambda y: y.random_(), lambda y: y.random_(3),
                 lambda y: y.random_(0, 3), lambda y: y.exponential_(), lambda y: y.bernoulli_(0.5),
                 lambda y: y.bernoulli_(internals.rand(2)), lambda y: internals.bernoulli(y.sigmoid()),
                 lambda y: y.cauchy_(), lambda y: y.log_normal_(), lambda y: y.geometric_(0.5),
                 lambda y: internals.poisson(y)):
        reached.add(fill(internals.ones(2, requires_grad=True).clone()).grad_fn.name())
    # More operators (tests/aten/test_sorting.py, test_unary_ops.py and test_distribution_kernels.py
    # compare their nodes and gradients with torch's).
    y = internals.ones(2, requires_grad=True)
    for out in (internals.cummax(y, 0).values, internals.cummin(y, 0).values, y.nan_to_num(),
                internals.normal(y, 1.0), internals.normal(0.0, y), internals.normal(y, y)):
        reached.add(out.grad_fn.name())
    # The COO factory (tests/aten/test_sparse_coo_factory_autograd.py compares its node and gradients).
    reached.add(internals.sparse_coo_tensor(internals.tensor([[0]]), y[:1], (2,)).grad_fn.name())
    for shapes, build in GRAD_CASES.values():
        reached |= _nodes(build(internals, *[internals.randn(s, dtype=internals.float64, requires_grad=True)
                                             for s in shapes]))
    for build in MATH_GRAD_CASES.values():
        reached |= _nodes(build(internals, _x(internals)))
    # The layers (tests/nn/test_layers.py compares their values, gradients and nodes with torch's).
    F, x = internals.nn.functional, internals.randn(2, 2, 4, 4, requires_grad=True)
    for out in (F.conv2d(x, internals.randn(3, 2, 3, 3)), F.max_pool2d(x, 2), F.layer_norm(x, [4]),
                F.batch_norm(x, None, None, training=True),
                F.embedding(internals.tensor([1, 0]), internals.randn(3, 2, requires_grad=True))):
        reached |= _nodes(out)
    # The CPU's fused attention (tests/nn/test_attention.py compares its node and gradients with torch's).
    reached |= _nodes(F.scaled_dot_product_attention(x, x, x))
    # The layers' backward operators differentiated again, cdist's refusing node, and the spatial
    # losses (tests/autograd/test_double_backward.py and tests/nn/test_losses_nd.py compare them with torch).
    from test_double_backward import CASES as TWICE_LAYER_CASES
    from test_double_backward import _second_derivatives
    for fn, arrays in TWICE_LAYER_CASES.values():
        firsts, _ = _second_derivatives(internals, F, fn, arrays)
        for g in firsts:
            reached |= _nodes(g)
    a = internals.rand(2, 2, dtype=internals.float64, requires_grad=True)
    reached |= _nodes(internals.autograd.grad(internals.cdist(a * 2, a.detach()).sum(), a, create_graph=True)[0])
    logits = internals.rand(2, 3, 2, 2, dtype=internals.float64, requires_grad=True)
    loss = F.cross_entropy(logits * logits, internals.zeros(2, 2, 2, dtype=internals.int64))
    reached |= _nodes(loss) | _nodes(internals.autograd.grad(loss, logits, create_graph=True)[0])
    # The operators of tests/aten/test_linear_algebra.py, and relu's backward differentiated again.
    from test_linear_algebra import GRAD_CASES as LINEAR_CASES
    for build in LINEAR_CASES.values():
        reached |= _nodes(build(internals))
    reached.add(internals.ones(2, requires_grad=True)[...].grad_fn.name())    # x[...] is alias
    # The view copies (tests/aten/test_view_copies.py compares their nodes and gradients with torch's).
    from test_view_copies import GRAD_BUILDS as VIEW_COPY_CASES
    x, t = (internals.rand(2, 3, dtype=internals.float64, requires_grad=True) for _ in range(2))
    for build in VIEW_COPY_CASES:
        reached |= _nodes(build(internals, x, t))
    # torch refuses this one, as the package does (off the list of operators differentiable at
    # complex outputs; tests/autograd/test_complex_autograd.py compares the refusal): its node is
    # made, never reached
    with pytest.raises(RuntimeError, match="does not support automatic differentiation for outputs with complex"):
        internals.view_as_complex_copy(internals.rand(2, 2, requires_grad=True))
    reached.add("ViewAsComplexBackward0_copy")
    # unsafe_split and unsafe_split_with_sizes (tests/aten/test_unsafe_split.py compares their nodes and gradients)
    z = internals.rand(4, 2, requires_grad=True)
    reached |= _nodes(internals.unsafe_split(z, 2)[0]) | _nodes(internals.unsafe_split_with_sizes(z, [1, 3])[1])
    # least squares (tests/aten/test_linalg_solvers.py compares its node and gradients with torch's)
    reached |= _nodes(internals.linalg.lstsq(internals.eye(3, 2, requires_grad=True), internals.ones(3)).solution)
    # cholesky_solve and cholesky_inverse (tests/aten/test_linalg_solvers.py compares their nodes and gradients)
    factor = (internals.eye(2, dtype=internals.float64) * 2).requires_grad_()
    reached |= _nodes(internals.cholesky_solve(internals.ones(2, 1, dtype=internals.float64), factor))
    reached |= _nodes(internals.cholesky_inverse(factor))
    # the batch norms torch's Python dispatcher calls (tests/aten/test_native_batch_norm_legit.py
    # compares their nodes and gradients with torch's)
    aten, xb = internals.ops.aten, internals.randn(4, 3, dtype=internals.float64, requires_grad=True)
    stats = [internals.zeros(3, dtype=internals.float64), internals.ones(3, dtype=internals.float64)]
    reached |= _nodes(aten._native_batch_norm_legit(xb, None, None, *stats, True, 0.1, 1e-5)[0])
    reached |= _nodes(aten._native_batch_norm_legit.no_stats(xb, None, None, True, 0.1, 1e-5)[0])
    reached |= _nodes(aten._native_batch_norm_legit_no_training(xb, None, None, *stats, 0.1, 1e-5)[0])
    # polar (tests/autograd/test_complex_autograd.py compares its node and gradients with torch's)
    reached.add(internals.polar(internals.ones(2, requires_grad=True), internals.zeros(2)).grad_fn.name())
    y = internals.randn(3, dtype=internals.float64, requires_grad=True)
    (g,) = internals.autograd.grad(y.relu(), y, internals.ones(3, dtype=internals.float64), create_graph=True)
    reached |= _nodes(g)
    # The rounding functions of tests/aten/test_unary_ops.py (its gradient test compares nodes and
    # gradients).
    from test_unary_ops import ROUNDING
    for name in ROUNDING:
        reached |= _nodes(getattr(internals.tensor([1.5], requires_grad=True), name)())
    # The in-place view operators (tests/aten/test_op_log_parity.py compares their nodes and gradients).
    for view_ in (lambda y: y.t_(), lambda y: y.transpose_(0, 1), lambda y: y.squeeze_(), lambda y: y.squeeze_(0),
                  lambda y: y.squeeze_((0,)), lambda y: y.unsqueeze_(0), lambda y: y.as_strided_((2,), (1,))):
        reached.add(view_(internals.ones(1, 2, requires_grad=True) * 1).grad_fn.name())
    # The backward operators differentiated twice (tests/aten/test_op_log_parity.py compares them).
    from test_op_log_parity import GRAD_CASES as TWICE_CASES
    from test_op_log_parity import _nodes as nodes_of
    for build in TWICE_CASES.values():
        x = internals.rand(3, 3, dtype=internals.float64, requires_grad=True)
        out = build(internals, x)
        (g,) = internals.autograd.grad(out, x, create_graph=True)
        reached |= nodes_of(out) | nodes_of(g)
    # view_as_complex, complex and view_as_real: the boundaries between real and complex
    # (tests/autograd/test_complex_autograd.py compares their gradients with torch's).
    for make in (lambda x: internals.view_as_complex(x), lambda x: internals.complex(x, x),
                 lambda x: internals.view_as_real(internals.view_as_complex(x))):
        reached.add(make(internals.ones(2, 2, requires_grad=True)).grad_fn.name())
    reached.add(internals.ones(2, requires_grad=True).angle().grad_fn.name())
    # The negative view and its copy (tests/aten/test_negative_view.py compares their nodes and
    # gradients with torch's).
    for neg in (internals._neg_view, internals._neg_view_copy):
        reached.add(neg(internals.ones(2, requires_grad=True)).grad_fn.name())
    # The in-place comparisons (tests/aten/test_structured_kernels.py compares their nodes and
    # zero gradients with torch's).
    from test_structured_kernels import COMPARISONS
    for name in COMPARISONS:
        for other in (1.5, internals.ones(2)):
            reached.add(getattr(internals.ones(2, requires_grad=True) * 1, name + "_")(other).grad_fn.name())
    # lift_fresh's copying twin, which tracers record (tests/compile/test_fx.py compares its node and
    # gradient with torch's).
    reached.add(internals.ops.aten.lift_fresh_copy(internals.ones(2, requires_grad=True)).grad_fn.name())
    # The conjugation nodes (tests/aten/test_conjugate_view.py compares each with torch's node).
    z = internals.ones(2, dtype=internals.complex128, requires_grad=True) * 1
    reached |= {internals.ops.aten._conj(z).grad_fn.name(), z.conj_physical().grad_fn.name(),
                z.clone().conj_physical_().grad_fn.name()}
    # The sparse conversions and masks (tests/aten/test_sparse.py) and the fused weight norm
    # (tests/aten/test_weight_norm.py) compare their nodes and gradients with torch's.
    from test_sparse import SPARSE_GRAPHS, _values_program
    for build in SPARSE_GRAPHS.values():
        reached |= _nodes(build(internals, internals.ones(2, 3, dtype=internals.float64, requires_grad=True)))
    reached |= _nodes(_values_program(internals)[1])
    # and the compressed layouts' conversions (tests/aten/test_sparse_compressed.py)
    from test_sparse_compressed import GRAPHS as COMPRESSED_GRAPHS
    for build in COMPRESSED_GRAPHS.values():
        reached |= _nodes(build(internals, internals.ones(4, 3, dtype=internals.float64, requires_grad=True)))
    reached |= _nodes(internals._weight_norm(internals.ones(2, 3, requires_grad=True),
                                             internals.ones(2, 1, requires_grad=True), 0))
    reached |= _later_operators_nodes()
    # matrix_exp, householder_product and the multi-label margin loss, differentiated twice where torch
    # does (tests/aten/test_matrix_exp.py, tests/aten/test_householder_product.py and
    # tests/nn/test_multilabel_margin_loss.py compare nodes and gradients with torch's)
    from test_householder_product import GRAD_CASES as HOUSEHOLDER_CASES
    from test_matrix_exp import GRAD_CASES as MATRIX_EXP_CASES
    from test_multilabel_margin_loss import GRAD_CASES as MULTILABEL_CASES
    for tensors, build in [*MATRIX_EXP_CASES.values(), *HOUSEHOLDER_CASES.values()]:
        leaves = [internals.from_torch(t).requires_grad_() for t in tensors]
        reached |= _nodes(build(internals, *leaves))
    for build in MULTILABEL_CASES.values():      # its backward operator's node refuses, as torch's
        x = internals.rand(2, 3, dtype=internals.float64, requires_grad=True)
        out = build(internals, x, None)
        (g,) = internals.autograd.grad(out, x, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # the CTC loss's two overloads and its backward's refusing nodes (tests/nn/test_ctc_loss.py compares
    # the forward's nodes and gradients, and the refusal, with torch's)
    lp = internals.zeros(3, 1, 3, dtype=internals.float64, requires_grad=True)
    for lengths in (([3], [1]), (internals.tensor([3]), internals.tensor([1]))):
        out = internals._ctc_loss(lp * 1, internals.tensor([[1]]), *lengths)[0]
        (g,) = internals.autograd.grad(out.sum(), lp, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # geqrf has no derivative in torch: its node refuses (tests/aten/test_householder_product.py)
    reached |= _nodes(internals.geqrf(internals.ones(3, 2, requires_grad=True) * 2).a)
    # addcmul and addcdiv (tests/aten/test_pointwise_ops.py compares their nodes and gradients).
    from test_pointwise_ops import GRAD_CASES as POINTWISE_CASES
    for build in POINTWISE_CASES.values():
        reached |= _nodes(build(internals, *[internals.rand(2, 3, dtype=internals.float64, requires_grad=True)
                                             for _ in range(3)]))
    # Later operators, differentiated twice (tests/aten/test_losses_index_add_unique_and_names.py,
    # tests/aten/test_unary_ops.py, test_reduce_ops.py, test_linalg_solvers.py, test_pooling.py,
    # test_padding.py, tests/nn/test_normalize.py, tests/aten/test_trigonometric_ops.py,
    # tests/aten/test_pointwise_special_functions.py and
    # tests/aten/test_products_in_place_and_out.py compare nodes and gradients).
    from test_activations import GRAD_CASES as ACTIVATION_CASES
    from test_activations import MORE_GRAD_CASES as MORE_ACTIVATION_CASES
    from test_linalg_solvers import GRAD_CASES as INVERSE_CASES
    from test_losses_and_distances import CASES as REGRESSION_LOSS_CASES
    from test_losses_index_add_unique_and_names import GRAD_CASES as LOSS_CASES
    from test_normalize import GRAD_CASES as NORMALIZE_CASES
    from test_padding import GRAD_CASES as PAD_CASES
    from test_pointwise_special_functions import GRAD_CASES as SPECIAL_FUNCTION_CASES
    from test_pooling import GRAD_CASES as POOL_CASES
    from test_products_in_place_and_out import GRAD_CASES as PRODUCT_CASES
    from test_reduce_ops import GRAD_CASES as NAN_REDUCTION_CASES
    from test_shape_scan_search_ops import CDIST_CASES
    from test_shape_scan_search_ops import GRAD_CASES as SHAPE_SCAN_CASES
    from test_trigonometric_ops import GRADIENTS as TRIG_CASES
    from test_unary_ops import GRAD_CASES as RSQRT_LOG1P_CASES
    for build in CDIST_CASES.values():       # first order only, as torch's (tests/aten/test_shape_scan_search_ops.py)
        reached |= _nodes(build(internals, *[internals.rand(2, 3, dtype=internals.float64, requires_grad=True)
                                             for _ in range(2)]))
    for build in [*LOSS_CASES.values(), *INVERSE_CASES.values(), *POOL_CASES.values(), *PAD_CASES.values(),
                  *NAN_REDUCTION_CASES.values(), *NORMALIZE_CASES.values(), *RSQRT_LOG1P_CASES.values(),
                  *SPECIAL_FUNCTION_CASES.values(),
                  *TRIG_CASES.values(),
                  *PRODUCT_CASES.values(), *SHAPE_SCAN_CASES.values(), *ACTIVATION_CASES.values(),
                  *MORE_ACTIVATION_CASES.values(), *REGRESSION_LOSS_CASES.values()]:
        x = internals.rand(2, 3, dtype=internals.float64, requires_grad=True)
        t = internals.rand(2, 3, dtype=internals.float64, requires_grad=True)
        out = build(internals, x, t)
        (g,) = internals.autograd.grad(out.sum(), x, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # conv1d and group norm (tests/nn/test_conv1d_group_norm.py compares them with torch); group
    # norm's backward operator has no derivative in torch, so its node refuses; at::norm's nodes,
    # which only C++ composites reach (pairwise_distance above).
    x = internals.randn(2, 4, 5, dtype=internals.float64, requires_grad=True)
    reached |= _nodes(F.conv1d(x, internals.randn(3, 4, 2, dtype=internals.float64))) | _nodes(F.group_norm(x, 2))
    mean, rstd = internals.ops.aten.native_group_norm(x, None, None, 2, 4, 5, 2, 1e-5)[1:]
    grads = internals.ops.aten.native_group_norm_backward(x * 1, x, mean, rstd, None, 2, 4, 5, 2, [True] * 3)
    with pytest.raises(RuntimeError, match="derivative for aten::native_group_norm_backward is not implemented"):
        grads[0].sum().backward()
    reached |= _nodes(grads[0]) | _nodes(internals.ops.aten.norm.Scalar(x))
    # masked_scatter's source gradient, an operator with its own derivative (its second derivative
    # against torch's: tests/autograd/test_double_backward.py)
    source = internals.ones(3, dtype=internals.float64, requires_grad=True)
    scattered = internals.zeros(2, 2, dtype=internals.float64).masked_scatter(internals.tensor([True, False]), source)
    reached |= _nodes(internals.autograd.grad(scattered.pow(2).sum(), source, create_graph=True)[0])
    # index's backward puts with _index_put_impl_ (its second derivative against torch's:
    # tests/autograd/test_double_backward.py)
    picked = source[internals.tensor([0, 2, 2])]
    reached |= _nodes(internals.autograd.grad(picked.pow(2).sum(), source, create_graph=True)[0])
    # nn.LSTM in float32: oneDNN's layer (tests/nn/test_lstm_onednn_layer.py compares it with torch)
    reached |= _nodes(internals.nn.LSTM(3, 4)(internals.randn(2, 1, 3))[0])
    reached |= _nodes(internals.ops.aten.norm.ScalarOpt_dim(x, 2, [1]))
    # the overloads with a dtype (their gradients against torch's: tests/aten/test_structured_products_...)
    reached |= _nodes(internals.ops.aten.norm.ScalarOpt_dim_dtype(x, 2, [1], False, dtype=x.dtype))
    reached |= _nodes(internals.ops.aten.norm.ScalarOpt_dtype(x, 2, dtype=x.dtype))
    # unique's node exists and refuses, as torch's does (its formula is ``not_implemented``).
    y = internals.unique(internals.tensor([2.0, 1.0, 2.0], requires_grad=True))
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not implemented"):
        y.sum().backward()
    reached.add(y.grad_fn.name())
    # unique(dim=)'s node refuses too.
    y = internals.unique(internals.ones(2, 2, requires_grad=True), dim=0)
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_dim' is not implemented"):
        y.sum().backward()
    reached.add(y.grad_fn.name())
    # The sliding blocks, pixel shuffling, adaptive max pooling and the margin losses, differentiated
    # twice, 3-d average pooling, bilinear and max unpooling (tests/nn/test_unfold_fold.py,
    # test_pixel_shuffle.py, test_adaptive_max_pool.py, test_margin_losses.py, test_pooling_3d.py,
    # test_bilinear.py and test_unpooling.py compare nodes and gradients with torch's).
    from test_adaptive_max_pool import SECOND_ORDER as POOL_TWICE
    from test_bilinear import SECOND_ORDER as BILINEAR_TWICE
    from test_margin_losses import SECOND_ORDER as MARGIN_TWICE
    from test_pixel_shuffle import SECOND_ORDER as SHUFFLE_TWICE
    from test_pooling_3d import SECOND_ORDER as POOL_3D_TWICE
    from test_unfold_fold import SECOND_ORDER as FOLD_TWICE
    from test_unpooling import SECOND_ORDER as UNPOOL_TWICE
    for build in [*POOL_TWICE.values(), *MARGIN_TWICE.values(), *SHUFFLE_TWICE.values(), *FOLD_TWICE.values(),
                  *POOL_3D_TWICE.values(), *BILINEAR_TWICE.values(), *UNPOOL_TWICE.values()]:
        out, x = build(internals)
        (g,) = internals.autograd.grad(out.sum(), x, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # fractional max pooling, rrelu (out of place and in place), channel_shuffle and pdist, their backward
    # operators differentiated again (tests/nn/test_pooling_fractional.py, test_activations.py,
    # test_pixel_shuffle.py and test_losses_and_distances.py compare their nodes and gradients with torch's)
    z = internals.rand(1, 2, 4, 4, 4, dtype=internals.float64, requires_grad=True)
    w = internals.rand(4, 3, dtype=internals.float64, requires_grad=True)
    for out, leaf in ((F.fractional_max_pool2d(z[0], 2, output_size=2), z),
                      (F.fractional_max_pool3d(z, 2, output_size=2), z), (F.rrelu(z, training=True), z),
                      (F.rrelu_(z * 1), z), (F.channel_shuffle(z, 2), z), (F.pdist(w), w)):
        (g,) = internals.autograd.grad(out.sum(), leaf, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # conv_tbc (tests/nn/test_conv_tbc.py compares its values, gradients and node with torch's)
    reached |= _nodes(internals.conv_tbc(z[0, 0], w[:, :2].reshape(2, 4, 1).expand(2, 4, 3), w[0], 1))
    # the LU factorizations and the triangular solvers (tests/aten/test_linalg_solvers.py compares
    # their nodes and gradients with torch's)
    a = internals.eye(3, dtype=internals.float64) * 2 + internals.ones(3, 3, dtype=internals.float64)
    a.requires_grad_()
    b = internals.ones(3, 2, dtype=internals.float64, requires_grad=True)
    for out in (internals.linalg.lu_factor(a)[0], internals.linalg.lu(a)[1], internals.lu_unpack(
            *internals.linalg.lu_factor(a))[2], internals.linalg.solve_triangular(a, b, upper=True),
            internals.triangular_solve(b, a)[0]):
        (g,) = internals.autograd.grad(out.sum(), a, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    reached |= _nodes(internals.linalg.lu_solve(*internals.linalg.lu_factor(a), b))
    # torch.special's Bessel functions and sinc (tests/test_special.py compares their nodes and
    # gradients, twice, with torch's)
    s = internals.tensor([0.5, 1.5], dtype=internals.float64, requires_grad=True)
    special = internals.special
    for out in (internals.i0(s), special.i0e(s), special.i1(s), special.i1e(s), internals.sinc(s), internals.erfc(s),
                special.erfcx(s), special.ndtri(s), special.log_ndtr(s), special.xlog1py(s, s), special.xlog1py(2, s),
                special.xlog1py(s, 2), special.zeta(s + 1, s), special.zeta(2, s), special.zeta(s + 1, 2),
                internals.polygamma(2, s), (s * 1).polygamma_(2), internals.mvlgamma(s + 2, 2)):
        reached |= _nodes(out)
    assert set(functions.__all__) - reached == set(), sorted(set(functions.__all__) - reached)


# ------------------------------------------------------------------------------ the worked example
def test_worked_example():
    for lib in (torch, internals):
        x = lib.tensor([2., 3.], requires_grad=True)
        y = 3 * x + 4
        out = (y ** 2).mean()
        out.backward()
        assert x.grad.tolist() == [30., 39.]


def pair(values, dtype_name="float32", requires_grad=True):
    theirs = torch.tensor(values, dtype=getattr(torch, dtype_name), requires_grad=requires_grad)
    ours = internals.tensor(values, dtype=getattr(internals, dtype_name), requires_grad=requires_grad)
    return ours, theirs


def both(fn, *values):
    """Run ``fn(lib, *leaves)`` in both libraries; return (ours, theirs) results and leaves."""
    leaves = [pair(v) for v in values]
    ours = fn(internals, *[o for o, _ in leaves])
    theirs = fn(torch, *[t for _, t in leaves])
    return (ours, theirs), leaves


# ------------------------------------------------------------------------------ graph structure
def test_next_functions_and_accumulate_grad():
    (ours, theirs), leaves = both(lambda lib, a, b: (a * b + a).exp().sum(), [1., 2.], [3., 4.])
    assert_same_graph(ours.grad_fn, theirs.grad_fn)
    add = ours.grad_fn.next_functions[0][0].next_functions[0][0]
    acc = add.next_functions[1][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is leaves[0][0]
    theirs_add = theirs.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc._sequence_nr() == theirs_add.next_functions[1][0]._sequence_nr() == 2 ** 64 - 1
    assert add.next_functions[0][0].next_functions[0] == (acc, 0)   # one AccumulateGrad for both uses of a
    # a Python scalar operand: no edge, as in torch
    o, t = pair([1.])
    assert (o + 1).grad_fn.next_functions[1] == (None, 0) and (t + 1).grad_fn.next_functions[1] == (None, 0)


def test_sequence_numbers_grow():
    x = internals.ones(2, requires_grad=True)
    a = x.exp()
    b = a.sin() if hasattr(a, "sin") else a.tanh()
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()


def _sequence_gaps(lib):
    a = lib.randn(3, requires_grad=True)
    b = a * 2                      # a's AccumulateGrad is made here
    c = b * 3
    d = lib.randn(3, requires_grad=True).exp()
    e = lib.randn(3).index_put_((lib.tensor([0]),), a[:1])
    return (c.grad_fn._sequence_nr() - b.grad_fn._sequence_nr(), d.grad_fn._sequence_nr() - c.grad_fn._sequence_nr(),
            e.grad_fn._sequence_nr() - d.grad_fn._sequence_nr())


def test_accumulate_grad_takes_no_sequence_number_as_torch():
    """AccumulateGrad is built with UINT64_MAX and takes no number from the counter (torch's
    ``Node(sequence_nr)`` constructor), so the nodes made after a leaf's first use are numbered as
    torch's; it used to take one and leave a gap."""
    assert _sequence_gaps(internals) == _sequence_gaps(torch)


@pytest.mark.parametrize("make, attrs", [
    (lambda lib, x: x * x, ["_saved_other", "_saved_self"]),
    (lambda lib, x: x + x, ["_saved_alpha"]),
    (lambda lib, x: x.sum(0), ["_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"]),
    (lambda lib, x: x.mean(), ["_saved_self_sym_numel", "_saved_self_sym_sizes"]),
    (lambda lib, x: x.view(4), ["_saved_self_sym_sizes"]),
    (lambda lib, x: x.exp(), ["_saved_result"]),
    (lambda lib, x: x.max(0)[0], ["_saved_dim", "_saved_indices", "_saved_keepdim", "_saved_self_sym_sizes"]),
    (lambda lib, x: x.amax(0), ["_saved_dim", "_saved_keepdim", "_saved_result", "_saved_self"]),
    (lambda lib, x: x.softmax(0), ["_saved_dim", "_saved_result"]),
    (lambda lib, x: x.mm(x.t()), ["_saved_mat2", "_saved_mat2_sym_sizes", "_saved_mat2_sym_strides", "_saved_self",
                                  "_saved_self_sym_sizes", "_saved_self_sym_strides"]),
    (lambda lib, x: x.select(0, 1), ["_saved_dim", "_saved_index", "_saved_self_sym_sizes"]),
    (lambda lib, x: x.split(1)[0], ["_saved_dim", "_saved_self_sym_sizes", "_saved_split_size"]),
    (lambda lib, x: x.permute(1, 0), ["_saved_dims"]),
    (lambda lib, x: x.as_strided((2, 2), (1, 2)), ["_saved_size", "_saved_storage_offset", "_saved_stride"]),
    (lambda lib, x: x.unfold(1, 2, 1), ["_saved_dimension", "_saved_self_sym_sizes", "_saved_size", "_saved_step"]),
    (lambda lib, x: x.diagonal(), ["_saved_dim1", "_saved_dim2", "_saved_offset", "_saved_self_sym_sizes"]),
    (lambda lib, x: lib.where(x > 0, x, x), ["_saved_condition"]),
    (lambda lib, x: x.transpose(0, 1), ["_saved_dim0", "_saved_dim1"]),
    (lambda lib, x: x.squeeze((0,)), ["_saved_dim", "_saved_self_sym_sizes"]),
])
def test_saved_attributes(make, attrs):
    """The ``_saved_`` attributes torch's node exposes, with equal values."""
    o, t = pair([[1., -2.], [3., 4.]])
    ours, theirs = make(internals, o).grad_fn, make(torch, t).grad_fn
    assert ours.name() == theirs.name()
    assert [a for a in dir(theirs) if a.startswith("_saved")] == attrs
    assert [a for a in dir(ours) if a.startswith("_saved")] == attrs
    for a in attrs:
        mine, theirs_value = getattr(ours, a), getattr(theirs, a)
        if isinstance(theirs_value, torch.Tensor):
            assert_same(mine, theirs_value, exact_layout=False)
        else:
            assert mine == theirs_value, a


def test_saved_result_is_the_output():
    ours = internals.ones(3, requires_grad=True).exp()
    saved = ours.grad_fn._saved_result
    assert saved.grad_fn is ours.grad_fn and saved.data_ptr() == ours.data_ptr()


# ------------------------------------------------------------------------------ errors
def assert_same_message(run):
    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(Exception) as ours:
        run(internals)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def _backward_twice(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _saved_after_free(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    y.grad_fn._saved_result  # noqa: B018  reading the freed saved tensor is what must raise


def _modified_output(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _modified_sigmoid_output(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


def _modified_leaf(lib):
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    u = w * w
    with lib.no_grad():
        w.add_(1)
    u.sum().backward()


def _modified_input(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    y = x * 1
    z = y * y
    y.mul_(2)
    z.sum().backward()


def _inference_tensor(lib):
    with lib.inference_mode():
        return lib.ones(2)


def _inference_tensor_saved(lib):
    (_inference_tensor(lib) * lib.tensor([1., 2.], requires_grad=True)).sum().backward()


def _inference_tensor_written_outside(lib):
    _inference_tensor(lib).add_(1)


@pytest.mark.parametrize("run", [
    _backward_twice, _saved_after_free, _modified_output, _modified_sigmoid_output, _modified_leaf, _modified_input,
    _inference_tensor_saved, _inference_tensor_written_outside,
    lambda lib: lib.tensor([1., 2.], requires_grad=True).add_(1),
    lambda lib: lib.tensor([1., 2.], requires_grad=True)[0].mul_(2),
    lambda lib: lib.tensor([1., 2.], requires_grad=True).exp().backward(),
    lambda lib: lib.ones(2).sum().backward(),
    lambda lib: setattr(lib.tensor([1., 2.], requires_grad=True).exp(), "requires_grad", False),
    lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(True),
    lambda lib: setattr(lib.ones(2, dtype=lib.int64), "requires_grad", True),
    lambda lib: lib.autograd.grad(lib.tensor([1.], requires_grad=True).exp().sum(),
                                  [lib.tensor([1.], requires_grad=True), lib.ones(1, requires_grad=True)]),
    lambda lib: lib.autograd.grad(lib.tensor([1.], requires_grad=True).exp().sum(), [lib.ones(1)]),
    lambda lib: lib.tensor([1., 2.], requires_grad=True).exp().backward(lib.ones(3)),
    lambda lib: (lib.tensor([1., 2., 3., 4.], requires_grad=True) * 1).split(2)[0].mul_(2),
])
def test_error_messages(run):
    assert_same_message(run)


def test_inference_tensor_written_inside_inference_mode():
    # Allowed there (no version to bump); outside, the write happens before the error, as in torch.
    for lib in (torch, internals):
        t = _inference_tensor(lib)
        with lib.inference_mode():
            t.add_(1)
        with pytest.raises(RuntimeError):
            t.add_(1)
        assert t.tolist() == [3., 3.]


# ------------------------------------------------------------------------------ engine behaviour
def test_retain_graph_allows_a_second_backward():
    for lib in (torch, internals):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert x.grad.tolist() == [4., 8.]


def test_grad_does_not_accumulate_and_allow_unused():
    results = []
    for lib in (torch, internals):
        x = lib.tensor([1., 2.], requires_grad=True)
        unused = lib.tensor([1.], requires_grad=True)
        gx, gu = lib.autograd.grad((x ** 3).sum(), [x, unused], allow_unused=True)
        assert x.grad is None and gu is None
        results.append(gx)
    assert_same(results[1], results[0])


def test_second_order():
    """grad of grad, with create_graph=True, for a composite of many ops."""
    def f(lib, x, w):
        y = (x * w).tanh() + x.sigmoid() * x.exp() - (x * x).log_softmax(0) + x.relu() ** w.abs()
        z = x.view(2, 2).mm(w.view(2, 2)).softmax(1)
        return (y / (1 + x * x)).sum() + z.amax(1).sum() + z.prod() + x[1:3].sqrt().sum() + x.max() * w.mean()
    grads = []
    for lib in (torch, internals):
        x = lib.tensor([0.5, 1.5, -0.3, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.2, -0.7, 0.4, 0.9], dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad(f(lib, x, w), x, create_graph=True)
        assert gx.requires_grad
        ggx, ggw = lib.autograd.grad((gx * gx).sum(), [x, w])
        grads.append((gx.detach(), ggx, ggw))
    for t, o in zip(*grads):
        internals.testing.check(o, t, exact_layout=False, rtol=1e-10, atol=1e-12)


def test_reused_tensor_gradients_add_up():
    (ours, theirs), leaves = both(lambda lib, a: (a * a * a + a.exp() * a).sum(), [0.5, -1.0])
    ours.backward()
    theirs.backward()
    assert_same(leaves[0][0].grad, leaves[0][1].grad, rtol=1e-6, atol=1e-6)


def test_broadcasting_gradients_are_summed():
    (ours, theirs), leaves = both(lambda lib, a, b: (a.view(2, 1) * b + b).sum(), [1., 2.], [3., 4., 5.])
    ours.backward()
    theirs.backward()
    for o, t in leaves:
        assert_same(o.grad, t.grad)


def test_mixed_dtypes_cast_gradients():
    for lib in (torch, internals):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, dtype=lib.float64, requires_grad=True)
        (a * b).sum().backward()
        assert a.grad.dtype == lib.float32 and b.grad.dtype == lib.float64
        c = lib.ones(2, requires_grad=True)
        c.double().sum().backward()
        assert c.grad.dtype == lib.float32 and c.grad.tolist() == [1., 1.]


def test_grads_accumulate_over_backwards():
    for lib in (torch, internals):
        x = lib.tensor([1., 2.], requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        assert x.grad.tolist() == [5., 5.] and x.grad is g


def test_grad_of_two_leaves_do_not_share_memory():
    x, y = internals.ones(2, requires_grad=True), internals.ones(2, requires_grad=True)
    (x + y).sum().backward()
    x.grad.mul_(3)
    assert y.grad.tolist() == [1., 1.]


def test_no_grad_and_detach():
    x = internals.ones(2, requires_grad=True)
    with internals.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    d = x.exp().detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    assert not x.data.requires_grad and x.data.data_ptr() == x.data_ptr()
    x.data.add_(1)                               # .data has its own version counter
    assert x._version == 0


# ------------------------------------------------------------------------------ hooks
def test_tensor_hooks_and_retain_grad():
    seen = {}
    for lib in (torch, internals):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 2)          # replaces the gradient flowing on
        x.register_hook(lambda g, lib=lib: seen.update({lib.__name__: g.tolist()}))
        (y * y).sum().backward()
        seen[lib.__name__ + "y"] = y.grad.tolist()
        seen[lib.__name__ + "x"] = x.grad.tolist()
        assert y.retains_grad and not x.retains_grad
    assert seen["torch"] == seen["internals"]
    assert seen["torchy"] == seen["internalsy"] and seen["torchx"] == seen["internalsx"]


def test_node_hooks():
    calls = []
    for lib in (torch, internals):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_prehook(lambda g_out, lib=lib: calls.append(("pre", lib.__name__, g_out[0].tolist())))
        y.grad_fn.register_hook(lambda g_in, g_out, lib=lib: calls.append(("post", lib.__name__, len(g_in))))
        handle = y.grad_fn.register_hook(lambda g_in, g_out: calls.append("removed"))
        handle.remove()
        y.sum().backward()
    assert [c for c in calls if c[1] == "torch"] == [(c[0], "torch", c[2]) for c in calls if c[1] == "internals"]


# ------------------------------------------------------------------------------ in place on views
@pytest.mark.parametrize("edit", [
    lambda lib, y: y[0:2].mul_(2),
    lambda lib, y: y[1].exp_(),
    lambda lib, y: y.t()[0].copy_(y[1] * 3),
    lambda lib, y: y.view(-1).narrow(0, 1, 2).add_(1),
    lambda lib, y: y.diagonal().zero_(),
])
def test_inplace_on_views_copy_slices(edit):
    results = []
    for lib in (torch, internals):
        x = lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64, requires_grad=True)
        y = x * x
        edit(lib, y)
        names = (y.grad_fn.name(),)
        (y * lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64)).sum().backward()
        results.append((names, x.grad))
    assert results[0][0] == results[1][0]
    assert_same(results[1][1], results[0][1], exact_layout=False)



@pytest.mark.parametrize("batch_first", [False, True])
def test_gradients_through_copy_slices_are_row_major_even_with_a_size_one_dimension(batch_first):
    """The in-place op's backward receives a row-major copy of its slice of the gradient: a
    length-1 sequence stacked by pad_sequence gets the gradient strides (2, 1), not the padded
    tensor's (6, 1) that a layout-preserving copy would keep for its size-1 dimension."""
    results = []
    for lib in (torch, internals):
        seqs = [lib.ones(n, 2, dtype=lib.float64, requires_grad=True) for n in (2, 4, 1)]
        z = lib.zeros(4, 3, dtype=lib.float64)
        column = lib.ones(4, 1, dtype=lib.float64, requires_grad=True)
        z[:, 1:2].copy_(column)
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first)
        grads = lib.autograd.grad(out.sum() + z.sum(), seqs + [column])
        results.append([(g.stride(), g.storage_offset()) for g in grads])
    assert results[1] == results[0]

@pytest.mark.parametrize("edit", [
    lambda lib, y: y.imag.mul_(3),
    lambda lib, y: y.diagonal().imag.mul_(0.5),
    lambda lib, y: y.real[1].exp_(),
    lambda lib, y: lib.view_as_real(y.mT)[0, :, 1].add_(1),
])
def test_inplace_on_real_views_of_a_complex_tensor(edit):
    """A real view of a complex base (real, imag, view_as_real) counts its strides and offset in
    real elements: CopySlices finds the view's slice of the base's gradient in those units."""
    results = []
    for lib in (torch, internals):
        x = lib.tensor([[1 + 2j, 2 - 1j], [3 + 0.5j, -4 + 1j]], dtype=lib.complex128, requires_grad=True)
        y = x * x
        edit(lib, y)
        w = lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64)
        (y.real * w + y.imag * w.mT).sum().backward()
        results.append((y.grad_fn.name(), x.grad))
    assert results[0][0] == results[1][0]
    assert_same(results[1][1], results[0][1], exact_layout=False)


def test_double_backward_through_inplace_on_a_view():
    results = []
    for lib in (torch, internals):
        x = lib.tensor([[0.5, 1.0], [-0.5, 2.0]], dtype=lib.float64, requires_grad=True)
        y = x * x
        y[:, 1].exp_()
        (gx,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        results.append((gx.detach(), ggx))
    for o, t in zip(results[1], results[0]):
        assert_same(o, t, exact_layout=False, rtol=1e-12, atol=1e-12)


def test_inplace_on_non_leaf_rebases_history():
    (ours, theirs), leaves = both(lambda lib, a: a * 1, [1., 2.])
    for t, lib in ((ours, internals), (theirs, torch)):
        t.mul_(leaves[0][0] if lib is internals else leaves[0][1])
        t.exp_()
    assert_same_graph(ours.grad_fn, theirs.grad_fn)
    assert ours.grad_fn._saved_result._version == theirs.grad_fn._saved_result._version
    ours.sum().backward()
    theirs.sum().backward()
    assert_same(leaves[0][0].grad, leaves[0][1].grad, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ random graphs
UNARY = ["exp", "tanh", "sigmoid", "neg", "abs", "relu"]


@hypothesis.given(st.data())
@hypothesis.settings(max_examples=25)
def test_random_graphs(data):
    """Random programs over two leaves: unary and binary ops, broadcasting, views, reuse and
    in-place ops on non-leaves; the gradients match torch's."""
    steps = data.draw(st.lists(st.tuples(st.sampled_from(["unary", "binary", "view", "inplace", "reduce"]),
                                         st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=8))
    grads = []
    for lib in (torch, internals):
        gen = torch.Generator().manual_seed(0)
        a0 = torch.randn(2, 3, generator=gen, dtype=torch.float64)
        b0 = torch.randn(3, generator=gen, dtype=torch.float64)
        a = (a0 if lib is torch else internals.from_torch(a0)).requires_grad_(True)
        b = (b0 if lib is torch else internals.from_torch(b0)).requires_grad_(True)
        values = [a, b]
        for kind, i, j in steps:
            x, y = values[i % len(values)], values[j % len(values)]
            if kind == "unary":
                values.append(getattr(x, UNARY[j % len(UNARY)])())
            elif kind == "binary":
                if x.dim() < y.dim():
                    x, y = y, x
                if tuple(y.shape) != tuple(x.shape)[-y.dim():] if y.dim() else False:
                    y = y.sum()
                values.append([x + y, x * y, x - y, x / (y * y + 1)][i % 4])
            elif kind == "view":
                values.append([x.t() if x.dim() == 2 else x.unsqueeze(0), x.reshape(-1), x.unsqueeze(0)[..., :1],
                               x.unsqueeze(-1).expand(*x.shape, 2)][i % 4])
            elif kind == "inplace":
                z = x * 1
                [z.mul_, z.add_, z.sub_][i % 3](y.sum())
                values.append(z)
            else:
                values.append([x.sum(-1) if x.dim() else x, x.mean(), x.amax(0) if x.dim() else x][i % 3])
        sum(v.sum() for v in values[2:]).backward() if len(values) > 2 else (a.sum() + b.sum()).backward()
        grads.append((a.grad, b.grad))
    for o, t in zip(grads[1], grads[0]):
        assert (o is None) == (t is None)
        if t is not None:
            internals.testing.check(o, t, exact_layout=False, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------------ codegen
def test_generated_files_are_up_to_date():
    """The checked-in generated code is what ``python -m internals.codegen`` writes today."""
    from internals.codegen.gen_autograd import GENERATED, generate
    for name, text in generate().items():
        assert (GENERATED / name).read_text() == text, f"{name} is stale: run python -m internals.codegen"


def test_a_forward_formula_may_name_several_outputs():
    """torch's ``U, S, Vh: linalg_svd_jvp(...)``: one call gives the three tangents in order; the
    outputs are not read as inputs with a gradient, and the kernel makes the call once."""
    import inspect

    from internals.autograd.generated import variable_type
    from internals.codegen.gen_autograd import load_derivatives
    info, = [i for i in load_derivatives() if str(i.schema.name) == "_linalg_svd"]
    assert list(info.edges) == ["A"] and list(info.forward) == ["U", "S", "Vh"]
    assert [f.rsplit("[", 1)[1] for f in info.forward.values()] == ["0]", "1]", "2]"]
    for kernel, jvp in ((variable_type._linalg_svd, "linalg_svd_jvp("), (variable_type.linalg_qr, "linalg_qr_jvp("),
                        (variable_type._linalg_slogdet, "slogdet_jvp(")):
        assert inspect.getsource(kernel).count(jvp) == 1


def test_every_differentiable_native_function_has_a_kernel():
    from internals.aten import dispatcher
    from internals.aten.native import tensor_factories
    from internals.codegen.gen_autograd import load_derivatives, match_natives
    unmatched = {str(s.name) for s in match_natives(load_derivatives())}
    manual = {"copy_", "resize_", "set_",
              "set_.source_Storage", "set_.source_Storage_storage_offset", "set_.source_Tensor"}
    not_differentiable = {"argmax", "argmin", "multinomial", "view.dtype", "nonzero",
                                        "repeat_interleave.Tensor", "detach", "_local_scalar_dense"}
    # Boolean and integer results (torch lists some with output_differentiability [False]).
    not_differentiable |= {n for n in unmatched if n.split(".")[0].rstrip("_") in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
        "__lshift", "__rshift", "__ilshift", "__irshift",
        "all", "any", "allclose", "count_nonzero", "equal", "isclose", "isfinite", "isinf",
        "isnan", "logical_and", "logical_or", "logical_xor", "logical_not")}
    not_differentiable |= {"bincount"}        # counts: an integer result
    not_differentiable |= {"_linalg_check_errors"}      # a check of LAPACK's codes: no result
    not_differentiable |= {"isin.Tensor_Tensor", "isin.Tensor_Scalar", "isin.Scalar_Tensor"}     # a bool result
    # eigenvalues without eigenvectors: torch has no formula (eigvals calls linalg_eig when a gradient is wanted)
    not_differentiable |= {"_linalg_eigvals"}
    # histc (torch: output_differentiability [False]) and the positions of searchsorted
    not_differentiable |= {"histc", "searchsorted.Tensor", "searchsorted.Scalar", "bucketize.Tensor",
                           "bucketize.Scalar"}
    # The sparse operators without a formula here (the conversions _to_sparse and _to_dense and
    # sparse_mask have torch's); to_sparse, to_dense and coalesce are composites over them.
    # (values, indices and the other accessors have entries now, as in torch's derivatives.yaml)
    sparse = {"_nnz", "coalesce", "dense_dim", "is_coalesced", "sparse_dim",
              "to_dense", "to_sparse", "to_sparse.sparse_dim", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
              "to_sparse_bsc"}
    # Factories: no tensor input, or (*_like) an output that is not differentiable -- torch lists
    # none of them in derivatives.yaml. Its lift_fresh entry (self: grad) is left out: here
    # lift_fresh returns its input itself, and torch.tensor calls it before requires_grad is set.
    factories = {n.split("::")[1] for n, op in dispatcher.operators.items()
                 if any(getattr(k.fn, "__module__", None) == tensor_factories.__name__ for k in op.kernels.values())}
    factories |= {f"{name}{overload}" for name in ("rand", "randn", "randperm", "rand_like", "randn_like")
                  for overload in ("", ".generator")} | {"randint", "randint.generator", "randint.low",
                                                         "randint.low_generator", "normal.float_float"}
    factories |= {f"randint_like{overload}" for overload in ("", ".generator", ".low_dtype", ".low_generator_dtype")}
    factories.add("empty_strided")     # its kernel lives in aten/empty_tensor.py, below TensorIterator
    factories.discard("lift_fresh_copy")     # a factory's kernel with a formula of its own, as torch's
    assert {"zeros", "empty.memory_format", "arange.start_step", "zeros_like", "lift_fresh"} <= factories
    aten = {n.split("::")[1] for n, op in dispatcher.operators.items() if op.namespace == "aten"}
    composite = {n for n in aten if "CompositeImplicitAutograd" in dispatcher.find(n).kernels}
    joining = {"concat", "concatenate", "hstack", "vstack", "atleast_1d", "atleast_2d", "atleast_1d.Sequence",
               "atleast_2d.Sequence", "row_stack", "tile", "repeat_interleave.self_Tensor",
               "repeat_interleave.self_int", "movedim.intlist", "moveaxis.int", "moveaxis.intlist", "swapaxes",
               "diag", "argwhere", "where",
               "fliplr", "flipud", "where.ScalarSelf", "where.ScalarOther", "where.Scalar"}
    math = {"argsort", "argsort.stable", "clip", "clip.Tensor", "clip_", "clip_.Tensor", "einsum",
            "outer", "std", "std.dim", "std_mean", "std_mean.dim",
            "var", "var.dim", "var_mean", "var_mean.dim"}
    math |= {"tensor_split.sections", "tensor_split.indices", "tensor_split.tensor_indices_or_sections"}
    math |= {"fix", "fix_", "fix.out"}      # trunc under another name
    math |= {"isclose", "ger"}     # op-log parity: a mode sees what they are made of
    math |= {"max.other", "max.out", "min.other", "min.out"}     # maximum and minimum under max's and min's names
    layers = {"conv2d", "conv2d.padding", "max_pool2d", "batch_norm", "layer_norm", "linear", "conv1d",
              "conv1d.padding", "group_norm", "conv_transpose1d", "conv_transpose2d.input", "instance_norm",
              "adaptive_max_pool1d", "max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
              "rms_norm", "_fused_rms_norm", "conv3d", "conv3d.padding", "conv_transpose3d.input", "bilinear",
              "adaptive_avg_pool3d", "max_pool3d"}
    complex_parts = {"real", "imag", "conj", "resolve_conj", "conj_physical", "resolve_neg"}  # complex_helper.py
    math |= {"matmul.out", "meshgrid", "meshgrid.indexing", "fill_diagonal_"}
    math |= {"adaptive_avg_pool2d", "det", "inverse", "linalg_det", "linalg_inv", "nanmean", "one_hot", "pad",
             "resize_as_"}
    math |= {"diagflat", "take_along_dim"}     # a diag, a gather
    math |= {"linalg_ldl_factor", "linalg_ldl_factor.out"}     # linalg_ldl_factor_ex with its check
    math |= {f"{name}{suffix}" for name in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh")
             for suffix in ("", "_")}      # numpy's names, aliases
    math |= {f"{name}{overload}" for name, overloads in (
        ("negative", ("", "_")), ("absolute", ("", "_")), ("swapdims", ("", "_")),
        ("multiply", (".Tensor", ".Scalar", "_.Tensor", "_.Scalar", ".out")),
        ("subtract", (".Tensor", ".Scalar", "_.Tensor", "_.Scalar", ".out")),
        ("true_divide", (".Tensor", ".Scalar", "_.Tensor", "_.Scalar", ".out")),
        ("float_power", (".Scalar", ".Scalar_out", ".Tensor_Scalar", ".Tensor_Scalar_out", ".Tensor_Tensor",
                         ".Tensor_Tensor_out", "_.Scalar", "_.Tensor")),
        ("atleast_3d", ("", ".Sequence")), ("hsplit", (".int", ".array")), ("vsplit", (".int", ".array")),
        ("dsplit", (".int", ".array")), ("isreal", ("",)), ("is_nonzero", ("",)), ("linalg_matrix_power", ("",)),
        ("matrix_power", ("",))) for overload in overloads}     # compositions of other operators
    not_differentiable |= {"is_same_size"}      # a bool
    # square is pow(x, 2), arctan2 atan2, log_sigmoid log_sigmoid_forward's output
    math |= {"square", "square_", "square.out", "arctan2", "arctan2_", "arctan2.out", "log_sigmoid"}
    from internals.autograd.variable_type_manual import _NO_FORMULA
    manual |= set(_NO_FORMULA)      # torch has no formula: a NotImplemented node, as set_'s
    not_differentiable |= {"gcd", "gcd_", "lcm", "lcm_"}     # integers only; no formula in torch
    not_differentiable |= {"view_copy.dtype"}     # view.dtype's output_differentiability [False]
    # no formula in torch either: a NotImplemented node
    manual |= {"linalg_ldl_factor_ex", "linalg_ldl_solve", "multi_margin_loss_backward",
               "multilabel_margin_loss_backward", "_ctc_loss_backward"}
    not_differentiable |= {"signbit", "isposinf", "isneginf"}         # a bool result
    math |= {"_pad_circular"}       # F.pad's circular mode, copies into a new tensor
    math |= {"ravel", "column_stack", "dstack", "cartesian_prod", "tensordot", "kron", "msort", "diff", "cross",
             "cdist"}
    math |= {"relu6", "relu6_", "selu", "selu_"}     # hardtanh and elu with fixed arguments, as torch's
    # the random activation and the SELU dropouts, pdist and native_channel_shuffle: torch's composites
    math |= {"rrelu", "rrelu_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
             "pdist", "native_channel_shuffle"}
    math |= {"conv_tbc_backward"}       # a composite of addmm_ over narrowed views, as torch's
    # prelu reshapes its weight for _prelu_kernel; the losses and similarities are torch's composites
    math |= {"prelu", "kl_div", "cosine_similarity", "pairwise_distance"}
    math |= {"margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss", "cosine_embedding_loss",
             "triplet_margin_loss"}
    # EmbeddingBag's forward-only form: no formula in torch either; its per-sample-weights
    # gradient has none and gets torch's refusing node
    backward_ops = {"_embedding_bag_forward_only"}
    manual |= {"_embedding_bag_per_sample_weights_backward"}
    # the fused attention's backward operator: no formula in torch either, torch's refusing node
    manual |= {"_scaled_dot_product_flash_attention_for_cpu_backward"}
    # the multi-tensor operators: one node over the per-element operators' (autograd/foreach_autograd.py)
    manual |= {n.split("::")[1] for n in dispatcher.operators if n.startswith("aten::_foreach_")}
    not_differentiable |= {"copy"}      # functionalization's copy: torch's has no formula
    # torch's composites over the decompositions, quantiles, EmbeddingBag and packing kernels
    math |= {"linalg_svd", "linalg_svdvals", "svd", "qr", "linalg_cholesky", "linalg_solve", "linalg_solve_ex",
             "logdet", "slogdet", "linalg_slogdet", "quantile", "quantile.scalar", "nanquantile",
             "nanquantile.scalar", "embedding_bag", "embedding_bag.padding_idx", "_pad_packed_sequence",
             "_pack_padded_sequence_backward", "linalg_eigh", "linalg_eigvalsh", "linalg_eigvals", "pinverse",
             "linalg_pinv", "linalg_pinv.atol_rtol_float", "linalg_pinv.rcond_tensor"}
    # grid_sample's checks before its 2-d operator; the affine grid's backward, a batched product
    math |= {"grid_sampler", "affine_grid_generator_backward"}
    # embedding's backward picks its sparse or dense form: torch's composites
    math |= {"embedding_backward", "embedding_sparse_backward"}
    # the anti-aliased resizes' .vec overloads: the output size from scale factors, then the operator
    math |= {f"_upsample_{mode}2d_aa.vec" for mode in ("bilinear", "bicubic", "lanczos")}
    # weight normalisation's unfused form, and EmbeddingBag's sparse backward: torch's composites
    math |= {"_weight_norm", "norm_except_dim", "_embedding_bag_sparse_backward",
             "_weight_norm_differentiable_backward"}
    # the fused weight norm's backward: torch's formula calls it only with grad mode off
    backward_ops |= {"_weight_norm_interface_backward"}
    # oneDNN's LSTM layer backward, likewise (with a refusing node of its own: tests/nn/test_lstm_onednn_layer.py)
    manual |= {"mkldnn_rnn_layer_backward"}
    # matrix_exp and orgqr name linalg_matrix_exp and linalg_householder_product, matrix_exp_backward
    # is the 2n x 2n block formula over linalg_matrix_exp, multilabel_margin_loss its forward's first output
    math |= {"matrix_exp", "matrix_exp_backward", "orgqr", "multilabel_margin_loss"}
    math |= {"lu_solve"}        # the older torch.lu_solve: linalg_lu_solve with its arguments reordered
    math |= {"chain_matmul", "chain_matmul.out", "linalg_multi_dot.out"}  # multi_dot_out: its last product by mm.out
    math |= {"ctc_loss.IntList", "ctc_loss.Tensor"}      # the composites over _ctc_loss
    # torch.special's renamings of operators the package has (special_expit is sigmoid), with their
    # out= forms, and ndtr over erf: torch's composites (internals/special.py)
    math |= {f"special_{name}{overload}" for name in ("digamma", "erf", "erfinv", "exp2", "expit", "expm1", "gammaln",
                                                       "erfc", "i0", "log1p", "psi", "round", "sinc")
             for overload in ("", ".out")}
    math |= {"special_log_softmax", "special_logsumexp", "special_ndtr", "special_softmax"}
    math |= {f"special_{name}{overload}" for name in ("polygamma", "multigammaln") for overload in ("", ".out")}
    math |= {f"special_xlogy{overload}" for overload in ("", ".out", ".other_scalar", ".other_scalar_out",
                                                          ".self_scalar", ".self_scalar_out")}
    # torch.linalg's compositions (LinearAlgebra.cpp): products, norms, ranks and inverses of other operators
    math |= {"linalg_cond", "linalg_cond.p_str", "linalg_diagonal", "linalg_matmul", "linalg_matmul.out",
             "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "linalg_matrix_rank",
             "linalg_matrix_rank.atol_rtol_float", "linalg_matrix_rank.atol_rtol_tensor",
             "linalg_matrix_rank.tol_tensor", "linalg_multi_dot", "linalg_norm", "linalg_norm.ord_str",
             "linalg_tensorinv", "linalg_tensorsolve", "linalg_vander", "linalg_vecdot"}
    # The TensorProperties operators read a size, stride or count back (no dispatch entry in
    # torch's YAML: CompositeImplicitAutograd there too)
    assert composite == {"sym_size.int", "sym_stride.int", "sym_numel", "sym_storage_offset",
                         "matmul", "reshape", "narrow", "narrow.Tensor", "split.sizes", "flatten.using_ints",
                         "unflatten.int", "movedim.int", "chunk", "unsafe_chunk", "isfinite", "softmax.int",
                         "log_softmax.int", "to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                         "to_sparse_bsc", "to_sparse.sparse_dim", "to_dense", "coalesce", "dropout", "dropout_",
                         "feature_dropout", "feature_dropout_", "_sparse_coo_tensor_unsafe",
                         "set_.source_Tensor_storage_offset"} | \
        joining | math | layers | complex_parts
    # silu's, logit's and mish's backward operators have no formula: their own formulas call them only with
    # grad mode off. (The layers' backward operators and _cdist_backward have entries of their own.)
    backward = {"silu_backward", "logit_backward", "mish_backward"} | backward_ops
    # out= overloads of operators without a formula (factories): the autograd fallback
    # runs them, refusing an out that requires grad (tests/aten/test_out_variants.py).
    outs = {n for n in unmatched if n in aten and dispatcher.find(n).schema.arguments.out}
    assert unmatched & aten == (manual | not_differentiable | sparse | composite | factories | backward | outs) & aten
    for name in manual:
        assert "Autograd" in dispatcher.find(name).kernels


@pytest.mark.parametrize("schema, node", [("sum", "SumBackward0"), ("sum.dim_IntList", "SumBackward1"),
                                          ("max.dim", "MaxBackward0"), ("max", "MaxBackward1"),
                                          ("squeeze.dims", "SqueezeBackward2"), ("fill_.Scalar", "FillBackward2"),
                                          ("_softmax", "SoftmaxBackward0"), ("pow.Tensor_Scalar", "PowBackward0"),
                                          ("pow.Tensor_Tensor", "PowBackward1"), ("pow.Scalar", "PowBackward2"),
                                          ("rsub.Scalar", "RsubBackward1")])
def test_node_names_follow_torch_numbering(schema, node):
    assert _node_names()[schema] == node


@functools.cache
def _node_names():
    """Each derivatives.yaml schema's node name, read once for the cases above (reading the file
    and torch's numbering takes a few tenths of a second)."""
    from internals.codegen.gen_autograd import load_derivatives
    return {str(i.schema.name): i.node for i in load_derivatives()}


def _steals(lib):
    """For each program: does the leaf's ``.grad`` reuse the gradient the engine computed?"""
    def hooked(*shape):
        x, ptrs = lib.ones(*shape, requires_grad=True), []
        x.register_hook(lambda g: ptrs.append(g.data_ptr()))    # sees the grad, keeps no reference
        return x, ptrs

    out = {}
    x, p = hooked(3)
    (x * 2).sum().backward()
    out["fresh grad: taken"] = x.grad.data_ptr() == p[0]
    x, p = hooked(3)
    x.sum().backward()
    out["expanded grad: cloned"] = x.grad.data_ptr() == p[0]
    x, g = lib.ones(3, requires_grad=True), lib.ones(3)
    x.backward(g)
    out["user's gradient: cloned"] = x.grad.data_ptr() == g.data_ptr()
    x, p = hooked(3, 2)
    (x.t() * 2).sum().backward()
    out["strides unlike the leaf's: cloned"] = x.grad.data_ptr() == p[0]
    x, p = hooked(3)
    (x + x).sum().backward()
    out["summed in the buffer: taken"] = x.grad.data_ptr() == p[0]
    x, p = hooked(3)
    (x * 2).sum().backward(create_graph=True)
    out["create_graph: cloned"] = x.grad.data_ptr() == p[0]
    return out


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_accumulate_grad_takes_the_gradient_when_nobody_else_holds_it():
    """``AccumulateGrad`` stores the engine's gradient itself, not a copy, when no one else can
    see it and its strides are the leaf's; otherwise a copy. Same decisions as torch's."""
    assert _steals(internals) == _steals(torch)
    x = internals.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad._base is None and not x.grad.requires_grad and x.grad.tolist() == [3.0, 3.0]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_accumulate_grad_decides_alike_under_a_tracer_that_reads_frames_locals():
    """A debugger or coverage tool that reads each frame's locals (``frame.f_locals``) keeps one
    more reference to every value a frame names: the decision to take the gradient does not count
    those, as torch's count of its C++ references does not see them."""
    def reading_locals(frame, event, arg):
        frame.f_locals      # noqa: B018 -- the read itself is what the test needs
        return reading_locals

    untraced = _steals(torch)
    previous = sys.gettrace()
    sys.settrace(reading_locals)
    try:
        traced = _steals(internals)
    finally:
        sys.settrace(previous)
    assert traced == untraced and traced["fresh grad: taken"]


RESHAPES = {
    "contiguous": lambda x: x.reshape(2, 8),
    "transposed_viewable": lambda x: x.t().reshape(2, 2, 4),
    "transposed_same_shape": lambda x: x.t().reshape(4, 4),
    "transposed_copied": lambda x: x.t().reshape(16),
    "sliced_viewable": lambda x: x[:, :2].reshape(2, 2, 2),
    "inverse": lambda x: (x / 64 + x.new_ones(4).diag() * 2).inverse().reshape(2, 2, 4),    # column-major
}


@pytest.mark.parametrize("name", RESHAPES)
def test_reshape_records_torchs_node(name):
    """``reshape`` of a contiguous tensor is a ``view``; of one that is not but can be viewed,
    an ``_reshape_alias`` (ReshapeAliasBackward0, a view of the same storage); otherwise a copy."""
    got = {}
    for lib in (torch, internals):
        x = lib.arange(16.0, dtype=lib.float64).reshape(4, 4).requires_grad_()
        y = RESHAPES[name](x)
        (y * lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)).sum().backward()
        got[lib] = (y.grad_fn.name(), tuple(y.stride()), y.storage_offset(), y._is_view(),
                    getattr(y.grad_fn, "_saved_self_sym_sizes", None)), x.grad
    assert got[internals][0] == got[torch][0]
    # the inverse's gradient goes through LAPACK's products twice: ulps apart, and more where they cancel
    assert_same(got[internals][1], got[torch][1], rtol=1e-12, atol=1e-15)


def test_reshape_under_a_dispatch_mode_is_a_view():
    """Under a dispatch mode torch's ``reshape`` calls ``view`` where it would call ``_reshape_alias``
    (the mode sees an operator it can replay), and the node is ViewBackward0."""
    seen = {}
    for lib in (torch, internals):
        calls = seen[lib] = []

        class Record(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None, calls=calls):
                calls.append(str(func))
                return func(*args, **(kwargs or {}))
        x = lib.ones(4, 4, requires_grad=True)
        with Record():
            y = x.t().reshape(2, 2, 4)
        calls.append(y.grad_fn.name())
    assert seen[internals] == seen[torch] == ["aten.t.default", "aten.view.default", "ViewBackward0"]


def test_detach_is_an_alias_not_a_view():
    for lib in (torch, internals):
        a = lib.ones(2)
        d = a.detach()
        assert d._base is None
        d.add_(1)          # shares storage and version counter with a
        assert a.tolist() == [2.0, 2.0] and a._version == d._version == 1


def test_backward_from_the_same_root_twice_sums_both_gradients():
    # torch's graph root has an edge per root: a root given twice is walked once, gets both
    # gradients, and the leaf behind it its full gradient (the leaf's count is not doubled).
    grads = {}
    for lib in (torch, internals):
        a = lib.tensor([0.5, 1.5], requires_grad=True)
        y = a * a
        lib.autograd.backward([y, y], [lib.ones(2), lib.tensor([1.0, 3.0])])
        grads[lib] = a.grad
    assert_same(grads[internals], grads[torch])


def _later_operators_nodes():
    """The nodes of the decompositions, quantiles, scatters, upsampling, EmbeddingBag and packing,
    and of the upsampling and EmbeddingBag backward operators differentiated again (their own test
    files compare nodes and gradients with torch: tests/aten/test_linear_algebra_decompositions.py,
    test_linear_algebra_eigen_and_pinv.py,
    test_sorting.py, test_view_scatters.py, tests/nn/test_interpolate.py,
    test_grid_sample.py, test_embedding_bag.py, test_packed_sequence.py)."""
    F, f64 = internals.nn.functional, internals.float64

    def leaf(*shape):
        return internals.rand(*shape, dtype=f64, requires_grad=True)
    a = leaf(3, 3)
    spd = a @ a.mT + 3 * internals.eye(3, dtype=f64)
    x, v = leaf(3, 3), leaf(3)
    outs = [internals.cholesky(spd), internals.linalg.cholesky(spd), internals.linalg.qr(a).Q,
            internals.linalg.svd(a).S, internals.linalg.slogdet(spd).logabsdet, internals.linalg.solve(spd, v),
            internals.vdot(v, v), internals.unique_consecutive(x), internals.nanmedian(x),
            internals.nanmedian(x, 0).values,
            internals.select_scatter(x, v, 0, 0), internals.slice_scatter(x, leaf(1, 3), 0, 0, 1),
            internals.diagonal_scatter(x, v), internals.as_strided_scatter(x, v, (3,), (1,)),
            internals.fill(x, 2.0), internals.fill(x, internals.tensor(2.0, dtype=f64)),
            internals.linalg.eigh(spd).eigenvalues, internals.linalg.pinv(a)]
    reached = set()
    # eig's complex results (tests/aten/test_linear_algebra_eigen_and_pinv.py compares its gradients)
    reached |= _nodes(internals.linalg.eig(a).eigenvalues)
    for out in outs:
        reached |= _nodes(out)
    image, signal, table = leaf(1, 1, 2, 2), leaf(1, 1, 3), leaf(4, 2)
    layers = [(F.interpolate(image, scale_factor=2, mode="nearest"), image),
              (F.interpolate(signal, scale_factor=2), signal),
              (F.interpolate(image, scale_factor=2, mode="bilinear"), image),
              (F.interpolate(signal, 5, mode="linear"), signal),
              (F.embedding_bag(internals.tensor([0, 2, 1]), table, internals.tensor([0, 1])), table)]
    volume, theta = leaf(1, 1, 2, 2, 2), leaf(1, 2, 3)
    layers += [(F.interpolate(volume, scale_factor=2), volume),
               (F.interpolate(volume, scale_factor=1.5, mode="trilinear"), volume),
               (F.interpolate(image, scale_factor=1.5, mode="bicubic"), image)]
    layers += [(F.interpolate(t, scale_factor=1.5, mode="nearest-exact"), t) for t in (signal, image, volume)]
    layers += [(F.grid_sample(image, F.affine_grid(theta, [1, 1, 2, 2], align_corners=False),
                              align_corners=False), theta)]
    layers += [(F.grid_sample(volume, leaf(1, 1, 2, 2, 3), align_corners=False), volume)]
    layers += [(F.interpolate(image, size=(3, 1), mode=mode, antialias=True), image)
               for mode in ("bilinear", "bicubic", "lanczos")]
    for out, source in layers:
        (g,) = internals.autograd.grad((out * out).sum(), source, create_graph=True)
        reached |= _nodes(out) | _nodes(g)
    # EmbeddingBag's dense backward called on a gradient that requires grad: its node refuses
    # (torch's formula is ``not_implemented``)
    aten, indices, offsets = internals.ops.aten, internals.tensor([0, 2, 1]), internals.tensor([0, 1])
    _, offset2bag, bag_size, maximum = aten._embedding_bag(table.detach(), indices, offsets)
    dense = aten._embedding_bag_dense_backward(leaf(2, 2), indices, offset2bag, bag_size, maximum, 4, False, 0, None)
    reached |= _nodes(dense)
    packed = internals.nn.utils.rnn.pack_padded_sequence(leaf(3, 2, 1), internals.tensor([3, 2]))
    reached |= _nodes(packed.data)
    signal = leaf(7)
    (g,) = internals.autograd.grad((signal.unfold(0, 3, 2) ** 2).sum(), signal, create_graph=True)
    return reached | _nodes(g)        # unfold's gradient, unfold_backward, differentiated again


@pytest.mark.parametrize("size, step", [(3, 2), (2, 2), (2, 3), (1, 1)])
def test_unfold_gradient_differentiated_again_as_torchs(size, step):
    """unfold's backward is an operator of its own (``unfold_backward``), whose gradient is unfold
    again: the double backward's nodes and values equal torch's, windows overlapping or not."""
    got = {}
    for lib in (torch, internals):
        x = lib.arange(1.0, 9.0, dtype=lib.float64).requires_grad_()
        (g,) = lib.autograd.grad((x.unfold(0, size, step) ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        got[lib] = g.grad_fn.name(), g.detach().tolist(), gg.tolist()
    assert got[torch] == got[internals]
