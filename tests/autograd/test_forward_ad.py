"""Forward-mode AD (``internals.autograd.forward_ad``) against torch's: dual tensors, the tangents
the forward formulas give, levels, views and in-place operations, errors, threads."""
import threading

import pytest
import torch

import internals
from tests.helpers import PRODUCT_ULPS, assert_same, assert_same_error, assert_within_ulps_of_largest, in_threads

# A tangent (and a value: mm's, layer norm's) is a sum of products whose terms may cancel: its
# rounding is measured against its largest value, not each element's own.
TANGENT_ULPS = 16


def _inputs(lib, *shapes, seed=0):
    """Seeded float64 primal and tangent pairs, the same numbers in both libraries."""
    g = torch.Generator().manual_seed(seed)
    pairs = [(torch.randn(s, generator=g, dtype=torch.float64), torch.randn(s, generator=g, dtype=torch.float64))
             for s in shapes]
    if lib is torch:
        return pairs
    return [(internals.from_torch(p), internals.from_torch(t)) for p, t in pairs]


def _unpacked(lib, fn, shapes):
    """Each output's (primal, tangent) after ``fn`` ran on dual tensors made of the inputs."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(p, t) for p, t in _inputs(lib, *shapes)]
        out = fn(lib, *duals)
        outs = out if isinstance(out, (list, tuple)) else (out,)
        return [tuple(fw.unpack_dual(o)) for o in outs]


def _index(lib):
    return lib.tensor([[0], [2], [1]])


F = {
    # elementwise, unary and binary
    "neg": (lambda L, x: -x, [(3, 4)]),
    "exp": (lambda L, x: x.exp(), [(3, 4)]),
    "log_abs": (lambda L, x: x.abs().log(), [(3, 4)]),
    "sqrt_abs": (lambda L, x: x.abs().sqrt(), [(3, 4)]),
    "sin_cos_tan": (lambda L, x: (x.sin(), x.cos(), x.tan()), [(3, 4)]),
    "reciprocal": (lambda L, x: x.reciprocal(), [(3, 4)]),
    "pow_scalar": (lambda L, x: x.pow(3), [(3, 4)]),
    "pow_tensor": (lambda L, x, y: x.abs().pow(y), [(3, 4), (3, 4)]),
    "add_alpha": (lambda L, x, y: L.add(x, y, alpha=2.5), [(3, 4), (4,)]),
    "sub_mul_div": (lambda L, x, y: (x - y) * y / (x.exp() + 1), [(3, 4), (3, 4)]),
    "scalar_ops": (lambda L, x: (x + 2, x * 3, x / 4, 1 - x), [(3, 4)]),
    "maximum_minimum": (lambda L, x, y: (L.maximum(x, y), L.minimum(x, y)), [(3, 4), (3, 4)]),
    "atan2": (lambda L, x, y: L.atan2(x, y), [(3, 4), (3, 4)]),
    "clamp": (lambda L, x: (x.clamp(-0.5, 0.5), x.clamp_min(0.1)), [(3, 4)]),
    "where": (lambda L, x, y: L.where(x > 0, x, y), [(3, 4), (3, 4)]),
    "addcmul": (lambda L, x, y: L.addcmul(x, x, y, value=0.5), [(3, 4), (3, 4)]),
    # activations
    "relu_gelu_silu": (lambda L, x: (L.relu(x), L.nn.functional.gelu(x), L.nn.functional.silu(x)), [(3, 4)]),
    "tanh_sigmoid": (lambda L, x: (x.tanh(), x.sigmoid()), [(3, 4)]),
    "gelu_tanh": (lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), [(3, 4)]),
    # matmul family
    "mm": (lambda L, a, b: a.mm(b), [(3, 4), (4, 5)]),
    "bmm": (lambda L, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 5)]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), [(5,), (3, 4), (4, 5)]),
    "mv_dot": (lambda L, a, v: (a.mv(v), v.dot(v)), [(3, 4), (4,)]),
    "matmul": (lambda L, a, b: a @ b, [(2, 3, 4), (4,)]),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    # reductions
    "sum_mean": (lambda L, x: (x.sum(), x.sum(1), x.mean(), x.mean(0, keepdim=True)), [(3, 4)]),
    "prod": (lambda L, x: (x.prod(), x.prod(1)), [(3, 4)]),
    "amax_max": (lambda L, x: (x.amax(1), x.max(), x.max(1).values, x.min(0, keepdim=True).values), [(3, 4)]),
    "logsumexp": (lambda L, x: x.logsumexp(1), [(3, 4)]),
    "var": (lambda L, x: x.var(1), [(3, 4)]),
    "softmax": (lambda L, x: (L.softmax(x, 1), L.log_softmax(x, 0)), [(3, 4)]),
    "std": (lambda L, x: (x.std(1), x.std()), [(3, 4)]),
    "norms": (lambda L, x: (x.norm(), *(L.linalg.vector_norm(x, p, dim=1) for p in (0, 1, float("inf"), 3, 0.5))),
              [(3, 4)]),
    "trace": (lambda L, x: x.trace(), [(3, 4)]),
    "sort_topk_kthvalue": (lambda L, x: (x.sort(1).values, x.topk(2).values, x.kthvalue(2, 0).values), [(3, 4)]),
    "rounding": (lambda L, x: (x.floor(), x.round(), x.frac()), [(3, 4)]),
    # views and shape ops
    "views": (lambda L, x: (x.view(12), x.t(), x[1:, ::2], x.unsqueeze(0).expand(2, 3, 4), x.transpose(0, 1)[1]),
              [(3, 4)]),
    "reshape_permute": (lambda L, x: (x.permute(2, 0, 1).reshape(4, 2), x.flatten(), x.squeeze(1)), [(2, 1, 4)]),
    "split_unbind": (lambda L, x: (*x.split(2, 1), *x.unbind(0)), [(3, 4)]),
    "cat_stack": (lambda L, x, y: (L.cat([x, y]), L.stack([x, y], 1)), [(3, 4), (3, 4)]),
    # indexing
    "index_gather": (lambda L, x: (x[[0, 2]], x.gather(1, _index(L)), x.index_select(0, L.tensor([2, 0]))),
                     [(3, 4)]),
    "clone_copy": (lambda L, x: x.clone(), [(3, 4)]),
    "index_put": (lambda L, x, v: (x.index_put((L.tensor([0, 2]),), v), x.index_put((L.tensor([1, 1]),), v, True)),
                  [(3, 4), (4,)]),
    "pad": (lambda L, x: L.nn.functional.pad(x, (1, 2), value=3.0), [(3, 4)]),
    # nn
    "layer_norm": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "conv2d": (lambda L, x, w, b: (L.nn.functional.conv2d(x, w, b, padding=1), L.nn.functional.conv2d(x, w, stride=2)),
               [(2, 3, 5, 5), (4, 3, 3, 3), (4,)]),
    "batch_norm": (lambda L, x, w, b: (L.nn.functional.batch_norm(x, None, None, w, b, training=True),
                                       L.nn.functional.batch_norm(x, L.zeros(3, dtype=L.float64),
                                                                  L.ones(3, dtype=L.float64), w, b)),
                   [(2, 3, 4), (3,), (3,)]),
    "pooling": (lambda L, x: (L.nn.functional.max_pool2d(x, 2), L.nn.functional.avg_pool2d(x, 2),
                              L.nn.functional.adaptive_max_pool2d(x, 3)), [(1, 2, 6, 6)]),
    "more_unary": (lambda L, x: (x.asinh(), x.erfc(), x.lgamma(), x.sinc(), L.nn.functional.hardswish(x),
                                 L.nn.functional.celu(x)), [(3, 4)]),
    "group_norm": (lambda L, x, w, b: (L.nn.functional.group_norm(x, 2, w, b), L.nn.functional.group_norm(x, 4)),
                   [(2, 4, 3), (4,), (4,)]),
    "clamp_tensors": (lambda L, x, lo: (x.clamp(min=lo), x.clamp(max=lo), x.clamp(lo, lo + 1)), [(3, 4), (3, 4)]),
    "cummax_median": (lambda L, x: (x.cummax(1).values, x.cummin(0).values, x.median(), x.nanmedian()), [(3, 4)]),
    "cross_inv": (lambda L, a, b: (L.linalg.cross(a, b), L.linalg.inv(a), L.linalg.inv_ex(a).inverse),
                  [(2, 3, 3), (2, 3, 3)]),
    "mse_loss": (lambda L, x, y: (L.nn.functional.mse_loss(x, y), L.nn.functional.mse_loss(x, y, reduction="none")),
                 [(3, 4), (3, 4)]),
    "nll_loss": (lambda L, x: L.nn.functional.nll_loss(L.log_softmax(x, 1), L.tensor([0, 3, 1])), [(3, 4)]),
    # the losses' tangents: both inputs' backward formulas unreduced, then the loss's reduction
    "smooth_l1_huber": (lambda L, x, y: (L.nn.functional.smooth_l1_loss(x, y, beta=0.5),
                                         L.nn.functional.smooth_l1_loss(x, y, reduction="none"),
                                         L.nn.functional.huber_loss(x, y, delta=0.7, reduction="sum")),
                        [(3, 4), (3, 4)]),
    "soft_margin_loss": (lambda L, x, y: (L.nn.functional.soft_margin_loss(x, y.detach().sign()),
                                          L.nn.functional.soft_margin_loss(x * y, y.detach().sign(), reduction="none")),
                         [(3, 4), (3, 4)]),
    "index_add_scatter_add": (lambda L, x, s: (x.index_add(0, L.tensor([2, 0]), s[:2], alpha=1.5),
                                               x.scatter_add(1, L.tensor([[0, 1, 1, 3]] * 2), s[:2]),
                                               x.index_add(1, L.tensor([3]), s[:, :1])), [(3, 4), (3, 4)]),
    "nansum_xlogy": (lambda L, x, y: (x.masked_fill(x > 1, float("nan")).nansum(), x.nansum(1, keepdim=True),
                                      x.masked_fill(x < 0, float("nan")).nansum(0, dtype=L.float32),
                                      L.xlogy(x.masked_fill(x < 0, 0), y.abs())), [(3, 4), (3, 4)]),
    "sgn": (lambda L, x, y: (x.sgn(), L.complex(x, y).sgn()), [(3, 4), (3, 4)]),
    "binary_cross_entropy": (lambda L, x, y: (L.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
                                              L.nn.functional.binary_cross_entropy(
                                                  x.sigmoid(), y.sigmoid(), L.linspace(0.5, 1.5, 4, dtype=L.float64),
                                                  reduction="sum"),
                                              L.nn.functional.binary_cross_entropy(x.sigmoid(), y.detach().sigmoid(),
                                                                                   reduction="none")),
                             [(3, 4), (3, 4)]),
    "logaddexp": (lambda L, x, y: (L.logaddexp(x, y), L.logaddexp2(x, y)), [(3, 4), (4,)]),
    "index_fill": (lambda L, x, v: (x.index_fill(1, L.tensor([0, 2]), 1.5), x.index_fill(0, L.tensor([1]), v.sum())),
                   [(3, 4), (2,)]),
    "cumprod": (lambda L, x: (x.cumprod(1), x.cumprod(0, dtype=L.float32), x.masked_fill(x.abs() < 0.5, 0).cumprod(1)),
                [(3, 4)]),
    "cumprod_in_place": (lambda L, x: x.clone().cumprod_(1), [(3, 4)]),
    # tr(A^-1 dA) from LAPACK's LU solve: its rounding follows the CPU's, and the trace sums terms that cancel
    "det": (lambda L, a: (L.linalg.det(a), L.det(a.mT), L.logdet(a @ a.mT)), [(2, 3, 3)], 64),
    "slogdet": (lambda L, a: (*L.linalg.slogdet(a), *L.slogdet(a[0].mT)), [(2, 3, 3)]),
    "det_complex": (lambda L, a, b: (L.linalg.det(L.complex(a, b)), *L.linalg.slogdet(L.complex(a, b))),
                    [(2, 3, 3), (2, 3, 3)], 64),
    "complex_polar": (lambda L, a, b: (L.complex(a, b), L.polar(a.abs(), b), L.complex(a, b.detach())),
                      [(3, 4), (3, 4)]),
    # a prefix whose exponentials all underflow: torch's formula adds 1e-13 to the denominator,
    # so those tangents are 0, not 0/0
    "logcumsumexp_underflowing_prefix": (lambda L, x: (x.logcumsumexp(1), (x - 1e308).logcumsumexp(1),
                                                       x.masked_fill(x < 0, -1e308).logcumsumexp(0)), [(3, 4)]),
    "binary_cross_entropy_with_logits": (
        lambda L, x, y: (L.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()),
                         L.nn.functional.binary_cross_entropy_with_logits(
                             x, y.sigmoid(), L.linspace(0.5, 1.5, 4, dtype=L.float64),
                             pos_weight=L.linspace(2.0, 0.5, 4, dtype=L.float64), reduction="sum"),
                         L.nn.functional.binary_cross_entropy_with_logits(x, y.detach().sigmoid(), reduction="none")),
        [(3, 4), (3, 4)]),
    "kl_div": (lambda L, x, y: (L.nn.functional.kl_div(x.log_softmax(1), y.log_softmax(1), reduction="batchmean",
                                                       log_target=True),
                                L.nn.functional.kl_div(x.log_softmax(1), y.softmax(1), reduction="none"),
                                L.nn.functional.kl_div(x.log_softmax(1), y.detach().softmax(1), reduction="sum")),
               [(3, 4), (3, 4)]),
    "glu": (lambda L, x: (L.nn.functional.glu(x), L.nn.functional.glu(x, 0), L.nn.functional.glu(x.t(), 1)),
            [(4, 6)]),
    "std_mean_var_mean": (lambda L, x: (*L.std_mean(x, 1), *L.var_mean(x, 0, correction=0), *L.std_mean(x),
                                        *L.var_mean(x, (0, 1), keepdim=True)), [(3, 4)]),
    # maxnorm between the slices' norms: some rows are scaled down, the others pass as they are
    "renorm": (lambda L, x: (x.renorm(2, 0, 2.0), x.renorm(1, 1, 2.5), x.renorm(3, -1, 1.5)), [(3, 4)]),
    "prelu": (lambda L, x, w: (L.nn.functional.prelu(x, w), L.nn.functional.prelu(x, w[:1])), [(3, 4), (4,)]),
    # composites: cosine_similarity clamps its norms in place (clamp_min.Tensor), triplet_margin_loss
    # takes pairwise distances (norm.ScalarOpt_dim)
    "cosine_similarity_triplet": (lambda L, a, p, n: (L.nn.functional.cosine_similarity(a, p),
                                                      L.nn.functional.cosine_similarity(a, p[0], dim=1),
                                                      L.nn.functional.triplet_margin_loss(a, p, n),
                                                      L.nn.functional.triplet_margin_loss(a, p, n, p=1.0, swap=True,
                                                                                          reduction="none")),
                                  [(3, 4), (3, 4), (3, 4)]),
    "clamp_min_max_tensor": (lambda L, x, b: (L.clamp_min(x, b), L.clamp_max(x, b), L.norm(x), L.norm(x, 3, 1)),
                             [(3, 4), (3, 4)]),
    # the in-place forms take their operator's formula, written into self's tangent
    "in_place_scatters_renorm_clamps": (
        lambda L, x, s: (x.clone().masked_scatter_(x > 0, s), x.clone().put_(L.tensor([0, 5, 7]), s[0, :3], True),
                         L.zeros(3, 4, dtype=L.float64).put_(L.tensor([0, 5]), s[0, :2]),
                         x.clone().renorm_(2, 0, 2.0), x.clone().clamp_min_(s), x.clone().clamp_max_(s)),
        [(3, 4), (3, 4)]),
    "masked_scatter_put": (lambda L, x, s: (x.masked_scatter(x > 0, s), x.put(L.tensor([0, 5, 7]), s[0, :3]),
                                            x.put(L.tensor([1, 1, 11]), s[1, :3], accumulate=True)),
                           [(3, 4), (3, 4)]),
    # the matrix functions' tangents: products and solves whose rounding follows LAPACK and BLAS
    "pinv_svdvals": (lambda L, a, b: (L.linalg.pinv(a), L.linalg.pinv(b), L.linalg.pinv(a[0].mT),
                                      L.linalg.svdvals(a), L.linalg.svdvals(b)), [(2, 3, 4), (4, 3)], 64),
    "qr": (lambda L, a, b: (*L.linalg.qr(a), *L.linalg.qr(b), *L.linalg.qr(a[0, :3], mode="complete"),
                            *L.linalg.qr(b.mT, mode="complete")), [(2, 4, 3), (4, 3)], 64),
    "cholesky": (lambda L, a: (L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=L.float64)),
                               L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=L.float64), upper=True)),
                 [(2, 3, 3)], 64),
    # complex matrices: the Hermitian adjoints, and a complex QR's R keeps a real diagonal (the
    # imaginary diagonal of C in Q^H dQ)
    "matrices_complex": (lambda L, a, b: (*L.linalg.qr(L.complex(a, b)), *L.linalg.qr(L.complex(a, b).mT),
                                          L.linalg.pinv(L.complex(a, b)), L.linalg.svdvals(L.complex(a, b)),
                                          L.linalg.cholesky((lambda z: z @ z.mH + L.eye(4))(L.complex(a, b))),
                                          L.linalg.solve(L.complex(a[:3], b[:3]), L.complex(b[:3], a[:3]).mT)),
                         [(4, 3), (4, 3)], 64),
    # a wide matrix's singular vectors (LAPACK's signs agree with torch's for this one)
    "svd_wide": (lambda L, a: (*L.linalg.svd(a.mT, full_matrices=False),), [(4, 3)], 64),
    "solve": (lambda L, a, b, v: (L.linalg.solve(a, b), L.linalg.solve(a, v), L.linalg.solve(a, b.mT, left=False),
                                  L.linalg.solve(a[0], v)), [(2, 3, 3), (2, 3, 2), (3,)], 64),
}


@pytest.mark.parametrize("name", F)
def test_values_and_tangents_match_torch(name):
    fn, shapes, *tolerance = F[name]
    ulps = tolerance[0] if tolerance else TANGENT_ULPS
    ours, theirs = _unpacked(internals, fn, shapes), _unpacked(torch, fn, shapes)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        assert_within_ulps_of_largest(p, tp, ulps)
        assert (t is None) == (tt is None)
        if tt is not None:
            assert_within_ulps_of_largest(t, tt, ulps, exact_layout=False)


def test_in_place_ops_update_the_tangent():
    """mul_ reads self's value from before the write; add_ on a plain tensor gives it a tangent."""
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, v), (y, w) = _inputs(lib, (3, 4), (3, 4))
        with fw.dual_level():
            d, e = fw.make_dual(x.clone(), v), fw.make_dual(y, w)
            d.mul_(e)
            z = lib.zeros(3, 4)
            z.add_(e)
            return fw.unpack_dual(d).tangent, fw.unpack_dual(z).tangent
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours, theirs, ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("fill", [
    lambda x: x.uniform_(), lambda x: x.normal_(), lambda x: x.exponential_(), lambda x: x.cauchy_(),
    lambda x: x.log_normal_(), lambda x: x.geometric_(0.5), lambda x: x.random_(3), lambda x: x.bernoulli_(0.5),
], ids=["uniform_", "normal_", "exponential_", "cauchy_", "log_normal_", "geometric_", "random_", "bernoulli_"])
def test_a_random_fill_zeroes_the_tangent(fill):
    """torch's ``result: self_t.zero_()``: the new values do not depend on the old ones."""
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, v), = _inputs(lib, (3, 4))
        lib.manual_seed(0)
        with fw.dual_level():
            d = fw.make_dual(x.clone(), v)
            fill(d)
            return fw.unpack_dual(d).tangent, v
    (ours, our_v), (theirs, their_v) = program(internals), program(torch)
    assert ours is our_v and theirs is their_v      # written in place, as torch's zero_ writes it
    assert_same(ours, theirs)


def test_poissons_tangent_is_zero():
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, v), = _inputs(lib, (3, 4))
        lib.manual_seed(0)
        with fw.dual_level():
            return tuple(fw.unpack_dual(lib.poisson(fw.make_dual(x.abs(), v))))
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours, theirs)


def test_a_views_tangent_is_the_same_view_of_its_bases_tangent():
    for lib in (internals, torch):
        fw = lib.autograd.forward_ad
        (x, v), = _inputs(lib, (3, 4))
        with fw.dual_level():
            view = fw.make_dual(x, v)[1:, 1:]
            tangent = fw.unpack_dual(view).tangent
            assert tangent._base is v
            assert tangent.stride() == (4, 1) and tangent.storage_offset() == 5


def test_writing_a_view_gives_its_base_a_tangent():
    """The base gets zeros, and the view's tangent, a view of them, takes the written values."""
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, v), = _inputs(lib, (3,))
        with fw.dual_level():
            base = lib.zeros(4, dtype=lib.float64)
            view = base[1:]
            view.copy_(fw.make_dual(x, v))
            view_t = fw.unpack_dual(view).tangent
            assert view_t._base is fw.unpack_dual(base).tangent
            later = base[:2]        # made after: its tangent is read off the base's, lazily
            return fw.unpack_dual(base).tangent, view_t, fw.unpack_dual(later).tangent
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours, theirs)


def test_unpack_gives_a_view_primal_without_tangent_and_the_tangent_as_is():
    for lib in (internals, torch):
        fw = lib.autograd.forward_ad
        (x, v), = _inputs(lib, (3,))
        with fw.dual_level() as level:
            assert level == 0
            d = fw.make_dual(x, v)
            assert d._base is x
            primal, tangent = fw.unpack_dual(d)
            assert tangent is v and primal._base is x
            assert fw.unpack_dual(primal).tangent is None
            assert type(fw.unpack_dual(d)).__name__ == "UnpackedDualTensor"
        assert fw.unpack_dual(d).tangent is None


def test_a_tangent_with_another_layout_is_copied_into_the_primals():
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, _), (v, _) = _inputs(lib, (3,), (6,))
        with fw.dual_level():
            tangent = fw.unpack_dual(fw.make_dual(x, v[::2])).tangent
            assert tangent is not v
            return tangent
    assert_same(program(internals), program(torch))


def test_leaving_the_level_drops_the_tangents():
    fw = internals.autograd.forward_ad
    (x, v), = _inputs(internals, (3,))
    with fw.dual_level():
        y = fw.make_dual(x, v).sin()
    with fw.dual_level():
        assert fw.unpack_dual(y).tangent is None
        assert fw.unpack_dual(y.cos()).tangent is None


def test_dual_level_is_a_decorator():
    fw = internals.autograd.forward_ad

    @fw.dual_level()
    def tangent_of_square(x, v):
        return fw.unpack_dual(fw.make_dual(x, v) ** 2).tangent
    (x, v), = _inputs(internals, (3,))
    (tx, tv), = _inputs(torch, (3,))
    assert_same(tangent_of_square(x, v), 2 * tx * tv)
    assert fw.unpack_dual(x).tangent is None


def _in_level(fn):
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return fn(lib, fw, *_inputs(lib, (3,))[0])
    return program


ERRORS = {
    "no_level": lambda lib: lib.autograd.forward_ad.make_dual(lib.ones(2), lib.ones(2)),
    "exit_without_level": lambda lib: lib.autograd.forward_ad.exit_dual_level(),
    "nested_level": _in_level(lambda lib, fw, x, v: fw.enter_dual_level()),
    "exit_other_level": _in_level(lambda lib, fw, x, v: fw.exit_dual_level(level=1)),
    "exit_negative_level": _in_level(lambda lib, fw, x, v: fw.exit_dual_level(level=-1)),
    "make_dual_other_level": _in_level(lambda lib, fw, x, v: fw.make_dual(x, v, level=5)),
    "unpack_other_level": _in_level(lambda lib, fw, x, v: fw.unpack_dual(fw.make_dual(x, v), level=1)),
    "integer_primal": _in_level(lambda lib, fw, x, v: fw.make_dual(lib.arange(3), v)),
    "integer_tangent": _in_level(lambda lib, fw, x, v: fw.make_dual(x, lib.arange(3))),
    "wrong_size": _in_level(lambda lib, fw, x, v: fw.make_dual(x, lib.ones(4))),
    "dual_of_dual": _in_level(lambda lib, fw, x, v: fw.make_dual(fw.make_dual(x, v), v)),
    "dual_tangent": _in_level(lambda lib, fw, x, v: fw.make_dual(x, fw.make_dual(x, v))),
    "no_formula": _in_level(lambda lib, fw, x, v: lib.special.zeta(fw.make_dual(x, v), x)),
    "out_function": _in_level(lambda lib, fw, x, v: lib.add(fw.make_dual(x, v), x, out=lib.empty(3))),
    # floating results that torch's derivatives.yaml gives no formula (NotImplemented nodes)
    "floor_divide": _in_level(lambda lib, fw, x, v: lib.floor_divide(fw.make_dual(x, v), 2)),
    "floor_divide_tensor": _in_level(lambda lib, fw, x, v: lib.floor_divide(x, fw.make_dual(x, v))),
    "floor_divide_in_place": _in_level(lambda lib, fw, x, v: x.clone().floor_divide_(fw.make_dual(x, v))),
    "remainder_of_a_number": _in_level(lambda lib, fw, x, v: lib.remainder(2.0, fw.make_dual(x, v))),
    "scatter_reduce_value": _in_level(
        lambda lib, fw, x, v: fw.make_dual(x, v).scatter(0, lib.tensor([1]), 2.0, reduce="multiply")),
    # torch's derivatives.yaml gives these no forward formula either
    "multi_margin_loss": _in_level(
        lambda lib, fw, x, v: lib.nn.functional.multi_margin_loss(fw.make_dual(x, v).unsqueeze(0), lib.tensor([1]))),
    "pdist": _in_level(lambda lib, fw, x, v: lib.nn.functional.pdist(fw.make_dual(x, v).reshape(3, 1))),
    "cdist": _in_level(lambda lib, fw, x, v: lib.cdist(fw.make_dual(x, v).reshape(1, 3, 1), x.reshape(1, 3, 1))),
    # binary_cross_entropy_with_logits' formula reads the weight itself, not its primal: a dual
    # weight would give the tangent a tangent
    "dual_loss_weight": _in_level(lambda lib, fw, x, v: lib.nn.functional.binary_cross_entropy_with_logits(
        fw.make_dual(x, v), x.sigmoid(), fw.make_dual(x, v))),
    "qr_mode_r": _in_level(lambda lib, fw, x, v: lib.linalg.qr(fw.make_dual(x, v).reshape(3, 1), mode="r")),
    "qr_complete_tall": _in_level(
        lambda lib, fw, x, v: lib.linalg.qr(fw.make_dual(x, v).reshape(3, 1), mode="complete")),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    ours, theirs = assert_same_error(lambda: ERRORS[name](internals), lambda: ERRORS[name](torch))
    assert str(ours) == str(theirs).replace("torch.", "internals.")


def test_a_tensor_without_tangent_unpacks_at_any_level():
    for lib in (internals, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            assert fw.unpack_dual(lib.ones(2), level=1).tangent is None


def test_levels_are_global_across_threads():
    """As in torch, a level entered on one thread is the current level on every thread."""
    fw = internals.autograd.forward_ad
    (x, v), = _inputs(internals, (3,))
    (tx, tv), = _inputs(torch, (3,))
    seen, lock = {}, threading.Lock()

    def work(k):
        tangent = fw.unpack_dual((fw.make_dual(x, v) * (k + 1)).exp()).tangent
        with lock:
            seen[k] = tangent
    with fw.dual_level():
        assert in_threads(work) == []
    for k, tangent in seen.items():
        assert_same(tangent, (tx * (k + 1)).exp() * tv * (k + 1), ulps=PRODUCT_ULPS)


def test_entering_from_two_threads_opens_one_level():
    fw = internals.autograd.forward_ad
    opened = []

    def work(k):
        try:
            opened.append(fw.enter_dual_level())
        except RuntimeError:
            pass
    try:
        assert in_threads(work) == []
        assert opened == [0]
    finally:
        if opened:
            fw.exit_dual_level()


def test_a_dual_tensor_prints_its_tangent():
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0, 3.0])
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor([0.5, -1.0, 2.0]))
            scalar = fw.make_dual(lib.tensor(1.5, requires_grad=True), lib.tensor(2.0)) * 2
            shown = [repr(d.sin()), repr(scalar), repr(fw.make_dual(lib.ones(2, 3, dtype=lib.float64),
                                                                   lib.zeros(2, 3, dtype=lib.float64)))]
        return shown + [repr(d)]
    assert [s.replace("internals.", "torch.") for s in program(internals)] == program(torch)


def test_a_tangent_is_differentiable_with_respect_to_the_inputs():
    """The formulas read the inputs through handles that keep their place in the graph: the
    tangent's gradient reaches the primal and the tangent (reverse over forward), and the
    gradient taken inside the level has a tangent of its own (forward over reverse)."""
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            assert type(d.grad_fn).__name__ == "ViewBackward0" and d._base is x
            tangent = fw.unpack_dual((d.sin() * d).sum()).tangent
            gx, gv = lib.autograd.grad(tangent, (x, v), create_graph=True)
            return gx, gv, fw.unpack_dual(lib.autograd.grad((d * d).sum(), x)[0]).tangent
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours.detach(), theirs.detach(), ulps=PRODUCT_ULPS)


def test_hessian_with_an_outer_forward_jacobian_matches_torch():
    def hessian(lib):
        x = lib.linspace(-1, 1, 3, dtype=lib.float64)
        return lib.autograd.functional.hessian(lambda a: (a ** 3).sum(), x, outer_jacobian_strategy="forward-mode",
                                               vectorize=True)
    ours, theirs = hessian(internals), hessian(torch)
    assert_same(ours.detach(), theirs.detach())
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_foreach_operators_carry_tangents_element_by_element():
    def program(lib):
        fw = lib.autograd.forward_ad
        (x, v), (y, w) = _inputs(lib, (3,), (2, 2))
        with fw.dual_level():
            d, e = fw.make_dual(x, v), fw.make_dual(y, w)
            products = lib._foreach_mul([d, e], [d, e])
            written = [d.clone(), lib.zeros(2, 2, dtype=lib.float64)]
            lib._foreach_add_(written, [d, e], alpha=2)
            return [fw.unpack_dual(t).tangent for t in (*products, *written)]
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours, theirs, ulps=PRODUCT_ULPS)


def test_in_place_writes_the_existing_tangent_that_views_share():
    """As in torch: the tangent given to make_dual is written in place, a view's tangent taken
    before the write sees it, and a base that gets its tangent later gives views theirs."""
    def program(lib):
        fw = lib.autograd.forward_ad
        x, t = lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0])
        with fw.dual_level():
            d = fw.make_dual(x, t)
            d.mul_(3)
            assert fw.unpack_dual(d).tangent is t
            view_t = fw.unpack_dual(d[0:1]).tangent
            d.sin_()
            y = lib.ones(2)
            y_view = y[:1]
            y.add_(d)
            y_view_t = fw.unpack_dual(y_view).tangent
            assert y_view_t._base is fw.unpack_dual(y).tangent
            return t, view_t, y_view_t
    for ours, theirs in zip(program(internals), program(torch)):
        assert_same(ours, theirs, ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("program", [
    lambda lib, x: lib.floor_divide(x, 2), lambda lib, x: lib.floor_divide(x, x),
    lambda lib, x: x.clone().floor_divide_(2), lambda lib, x: lib.remainder(2.0, x),
    lambda lib, x: x.scatter(0, lib.tensor([1]), x[:1], reduce="add"),
    lambda lib, x: x.clone().scatter_(0, lib.tensor([1]), 2.0, reduce="multiply"),
], ids=["floor_divide", "floor_divide_tensor", "floor_divide_", "remainder_of_a_number", "scatter_reduce",
        "scatter_reduce_value_"])
def test_operators_without_a_formula_record_a_refusing_node(program):
    """torch's NotImplemented node, linked to the inputs, whose backward raises (before, the result
    came back without a grad_fn: a gradient through it was silently missing)."""
    def graph(lib):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = program(lib, x)
        return y.grad_fn.name(), [type(n).__name__ for n, _ in y.grad_fn.next_functions], y
    (ours, our_edges, y), (theirs, their_edges, z) = graph(internals), graph(torch)
    assert (ours, our_edges) == (theirs, their_edges)
    assert_same_error(lambda: y.sum().backward(), lambda: z.sum().backward())
