"""Layers and losses given odd shapes, dtypes, layouts and arguments, and the gradients of their
gradients taken twice with ``create_graph=True`` (a third derivative): each program runs with
``L`` torch and with ``L`` internals, and gives torch's values (within the ulps CONTRIBUTING.md
allows a chain of library functions), dtypes, shapes, strides and ``grad_fn`` names, or raises
torch's exception class."""
import math

import pytest
from helpers import program_of
from test_hostile_training_stack import COMPOSITE_ULPS, NORM_ULPS, twin

X = "L.linspace(-2., 2., 24, dtype=L.float64).reshape(2, 3, 4)"
IMG = "L.linspace(-2., 2., 96, dtype=L.float64).reshape(2, 3, 4, 4)"


def third(L, f, *xs):
    """``f(*xs)``, the gradient of its weighted sum, the gradient of that gradient's square and
    the gradient of the second one's sum, each made with ``create_graph=True``, and their nodes."""
    xs = [x.requires_grad_() for x in xs]
    out = f(*xs)
    w = L.linspace(0.5, 1.5, max(out.numel(), 1), dtype=out.dtype).reshape(out.shape)
    g1 = L.autograd.grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    live = [g for g in g1 if g is not None and g.requires_grad]
    if not live:
        return [out, list(g1)]
    g2 = L.autograd.grad(sum((g * g).sum() for g in live), xs, create_graph=True, allow_unused=True)
    live2 = [g for g in g2 if g is not None and g.requires_grad]
    if not live2:
        return [out, list(g1), list(g2)]
    g3 = L.autograd.grad(sum(g.sum() for g in live2), xs, allow_unused=True)
    return [out, list(g1), list(g2), list(g3)]


# the layers and losses whose backward is written by hand: three derivatives through each
THIRD = {
 "linear": f"x = {X}; w = L.linspace(-1., 1., 20, dtype=L.float64).reshape(5, 4); "
           "b = L.linspace(0., 1., 5, dtype=L.float64); third(L, L.nn.functional.linear, x, w, b)",
 "bilinear": "a = L.linspace(-1., 1., 6, dtype=L.float64).reshape(2, 3); b = L.linspace(0., 2., 4, dtype=L.float64)"
             ".reshape(2, 2); w = L.linspace(-1., 1., 24, dtype=L.float64).reshape(4, 3, 2); "
             "third(L, L.nn.functional.bilinear, a, b, w)",
 "conv1d": f"x = {X}; w = L.linspace(-1., 1., 18, dtype=L.float64).reshape(2, 3, 3); "
           "third(L, lambda x, w: L.nn.functional.conv1d(x, w, padding=1, stride=2), x, w)",
 "conv2d_dilated": f"x = {IMG}; w = L.linspace(-1., 1., 24, dtype=L.float64).reshape(2, 3, 2, 2); "
                   "third(L, lambda x, w: L.nn.functional.conv2d(x, w, dilation=2, padding=1), x, w)",
 "conv2d_groups": f"x = {IMG}[:, :2]; w = L.linspace(-1., 1., 18, dtype=L.float64).reshape(2, 1, 3, 3); "
                  "third(L, lambda x, w: L.nn.functional.conv2d(x, w, groups=2), x, w)",
 "conv_transpose2d": f"x = {IMG}; w = L.linspace(-1., 1., 24, dtype=L.float64).reshape(3, 2, 2, 2); "
                     "third(L, lambda x, w: L.nn.functional.conv_transpose2d(x, w, stride=2, padding=1), x, w)",
 "conv_transpose1d": f"x = {X}; w = L.linspace(-1., 1., 18, dtype=L.float64).reshape(3, 2, 3); "
                     "third(L, lambda x, w: L.nn.functional.conv_transpose1d(x, w, padding=1), x, w)",
 "batch_norm_train": f"x = {X}; w = L.linspace(0.5, 1.5, 3, dtype=L.float64); b = L.zeros(3, dtype=L.float64); "
                     "third(L, lambda x, w, b: L.nn.functional.batch_norm(x * x, None, None, w, b, training=True), "
                     "x, w, b)",
 "batch_norm_eval": f"x = {X}; rm = L.linspace(-.1, .1, 3, dtype=L.float64); rv = L.linspace(1., 2., 3, "
                    "dtype=L.float64); third(L, lambda x: L.nn.functional.batch_norm(x * x, rm, rv), x)",
 "layer_norm": f"x = {X}; w = L.linspace(0.5, 1.5, 4, dtype=L.float64); b = L.zeros(4, dtype=L.float64); "
               "third(L, lambda x, w, b: L.nn.functional.layer_norm(x * x, (4,), w, b), x, w, b)",
 "group_norm": f"x = {IMG}[:, :2]; w = L.linspace(0.5, 1.5, 2, dtype=L.float64); b = L.zeros(2, dtype=L.float64); "
               "third(L, lambda x, w, b: L.nn.functional.group_norm(x * x, 2, w, b), x, w, b)",
 "instance_norm": f"x = {X}; third(L, lambda x: L.nn.functional.instance_norm(x * x), x)",
 "rms_norm": f"x = {X}; w = L.linspace(0.5, 1.5, 4, dtype=L.float64); "
             "third(L, lambda x, w: L.nn.functional.rms_norm(x, (4,), w), x, w)",
 "softmax": f"x = {X}; third(L, lambda x: L.softmax(x, 1), x)",
 "log_softmax": f"x = {X}; third(L, lambda x: L.log_softmax(x * x, -1), x)",
 "softmin": f"x = {X}; third(L, lambda x: L.nn.functional.softmin(x, 0), x)",
 "gelu_tanh": f"x = {X}; third(L, lambda x: L.nn.functional.gelu(x, approximate='tanh'), x)",
 "gelu": f"x = {X}; third(L, L.nn.functional.gelu, x)",
 "silu": f"x = {X}; third(L, L.nn.functional.silu, x)",
 "mish": f"x = {X}; third(L, L.nn.functional.mish, x)",
 "elu": f"x = {X}; third(L, lambda x: L.nn.functional.elu(x, alpha=0.7), x)",
 "selu": f"x = {X}; third(L, L.nn.functional.selu, x)",
 "celu": f"x = {X}; third(L, lambda x: L.nn.functional.celu(x, alpha=2.), x)",
 "softplus": f"x = {X}; third(L, lambda x: L.nn.functional.softplus(x, beta=2., threshold=1.), x)",
 "hardswish": f"x = {X}; third(L, L.nn.functional.hardswish, x)",
 "hardsigmoid": f"x = {X}; third(L, L.nn.functional.hardsigmoid, x)",
 "hardtanh": f"x = {X}; third(L, lambda x: L.nn.functional.hardtanh(x, -1., 0.5), x)",
 "leaky_relu": f"x = {X}; third(L, lambda x: L.nn.functional.leaky_relu(x * x - 1, 0.2), x)",
 "logsigmoid": f"x = {X}; third(L, L.nn.functional.logsigmoid, x)",
 "tanhshrink": f"x = {X}; third(L, L.nn.functional.tanhshrink, x)",
 "softsign": f"x = {X}; third(L, L.nn.functional.softsign, x)",
 "prelu": f"x = {X}; a = L.tensor([0.1, 0.2, 0.3], dtype=L.float64); "
          "third(L, lambda x, a: L.nn.functional.prelu(x * x - 1, a), x, a)",
 "glu": f"x = {X}; third(L, lambda x: L.nn.functional.glu(x, -1), x)",
 "max_pool2d": f"x = {IMG}; third(L, lambda x: L.nn.functional.max_pool2d(x * x, 2), x)",
 "avg_pool2d": f"x = {IMG}; third(L, lambda x: L.nn.functional.avg_pool2d(x * x, 3, 1, 1, count_include_pad=False), x)",
 "adaptive_avg_pool2d": f"x = {IMG}; third(L, lambda x: L.nn.functional.adaptive_avg_pool2d(x * x, (3, 2)), x)",
 "adaptive_max_pool1d": f"x = {X}; third(L, lambda x: L.nn.functional.adaptive_max_pool1d(x * x, 3), x)",
 "lp_pool1d": f"x = {X}; third(L, lambda x: L.nn.functional.lp_pool1d(x * x + 1, 2., 2), x)",
 "interpolate_bilinear": f"x = {IMG}; third(L, lambda x: L.nn.functional.interpolate(x * x, scale_factor=1.5, "
                         "mode='bilinear', align_corners=False), x)",
 "interpolate_bicubic": f"x = {IMG}; third(L, lambda x: L.nn.functional.interpolate(x * x, size=(3, 5), "
                        "mode='bicubic', align_corners=True), x)",
 "interpolate_nearest": f"x = {IMG}; third(L, lambda x: L.nn.functional.interpolate(x * x, size=(5, 3)), x)",
 "grid_sample_input": f"x = {IMG}; g = L.linspace(-0.9, 0.9, 24, dtype=L.float64).reshape(2, 2, 3, 2); "
                      "third(L, lambda x: L.nn.functional.grid_sample(x * x, g, align_corners=False), x)",
 "embedding": "w = L.linspace(-1., 1., 12, dtype=L.float64).reshape(4, 3); i = L.tensor([[0, 2], [2, 3]]); "
              "third(L, lambda w: L.nn.functional.embedding(i, w * w, padding_idx=2), w)",
 "embedding_bag": "w = L.linspace(-1., 1., 12, dtype=L.float64).reshape(4, 3); i = L.tensor([0, 2, 2, 3]); "
                  "o = L.tensor([0, 1]); third(L, lambda w: L.nn.functional.embedding_bag(i, w * w, o, "
                  "mode='mean'), w)",
 "cosine_similarity": f"x = {X}; y = {X}.flip(0); third(L, lambda x, y: L.nn.functional.cosine_similarity(x, y, 1), "
                      "x, y)",
 "pairwise_distance": f"x = {X}; y = {X}.flip(0) + 0.1; "
                      "third(L, lambda x, y: L.nn.functional.pairwise_distance(x, y, 3.), x, y)",
 "normalize": f"x = {X}; third(L, lambda x: L.nn.functional.normalize(x, p=3., dim=2), x)",
 "pdist": "x = L.linspace(-1., 2., 12, dtype=L.float64).reshape(4, 3); third(L, lambda x: L.pdist(x * x), x)",
 "cdist": "x = L.linspace(-1., 2., 12, dtype=L.float64).reshape(4, 3); y = L.linspace(0., 1., 6, dtype=L.float64)"
          ".reshape(2, 3); third(L, lambda x, y: L.cdist(x, y, p=1.5), x, y)",
 "pixel_shuffle": f"x = {IMG}[:, :1].repeat(1, 4, 1, 1); third(L, lambda x: L.nn.functional.pixel_shuffle(x * x, "
                  "2), x)",
 "unfold": f"x = {IMG}; third(L, lambda x: L.nn.functional.unfold(x * x, 2, stride=2), x)",
 "fold": "x = L.linspace(-1., 1., 48, dtype=L.float64).reshape(1, 12, 4); "
         "third(L, lambda x: L.nn.functional.fold(x * x, (3, 3), 2), x)",
 "pad_reflect": f"x = {X}; third(L, lambda x: L.nn.functional.pad(x * x, (2, 1), mode='reflect'), x)",
 "pad_replicate": f"x = {IMG}; third(L, lambda x: L.nn.functional.pad(x * x, (1, 2, 0, 1), mode='replicate'), x)",
 "pad_circular": f"x = {X}; third(L, lambda x: L.nn.functional.pad(x * x, (1, 2), mode='circular'), x)",
 "dropout_eval": f"x = {X}; third(L, lambda x: L.nn.functional.dropout(x * x, 0.5, training=False), x)",
 "sdpa": "q = L.linspace(-1., 1., 24, dtype=L.float64).reshape(1, 2, 3, 4); k = q.flip(2) * 0.5; v = q + 1; "
         "third(L, lambda q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v), q, k, v)",
 "sdpa_causal": "q = L.linspace(-1., 1., 24, dtype=L.float64).reshape(1, 2, 3, 4); k = q.flip(2) * 0.5; "
                "v = q + 1; third(L, lambda q: L.nn.functional.scaled_dot_product_attention(q, k, v, "
                "is_causal=True), q)",
 "lstm_cell": "x = L.linspace(-1., 1., 6, dtype=L.float64).reshape(2, 3); L.manual_seed(0); "
              "c = L.nn.LSTMCell(3, 2).double(); third(L, lambda x: L.cat(c(x), 1), x)",
 "gru_cell": "x = L.linspace(-1., 1., 6, dtype=L.float64).reshape(2, 3); L.manual_seed(0); "
             "c = L.nn.GRUCell(3, 2).double(); third(L, c, x)",
 "rnn_tanh": "x = L.linspace(-1., 1., 12, dtype=L.float64).reshape(2, 2, 3); L.manual_seed(0); "
             "r = L.nn.RNN(3, 2).double(); third(L, lambda x: r(x)[0], x)",
 "mse": f"x = {X}; t = {X}.flip(2); third(L, lambda x, t: L.nn.functional.mse_loss(x * x, t), x, t)",
 "l1": f"x = {X}; t = {X}.flip(2) + 0.1; third(L, lambda x: L.nn.functional.l1_loss(x * x, t, reduction='sum'), x)",
 "huber": f"x = {X}; t = {X}.flip(2); third(L, lambda x, t: L.nn.functional.huber_loss(x * x, t, delta=0.5), x, t)",
 "smooth_l1": f"x = {X}; t = {X}.flip(2); "
              "third(L, lambda x, t: L.nn.functional.smooth_l1_loss(x * x, t, beta=0.3, reduction='none'), x, t)",
 "cross_entropy": "x = L.linspace(-2., 2., 12, dtype=L.float64).reshape(4, 3); t = L.tensor([0, 2, 1, 2]); "
                  "third(L, lambda x: L.nn.functional.cross_entropy(x * x, t, label_smoothing=0.1), x)",
 "cross_entropy_probs": "x = L.linspace(-2., 2., 12, dtype=L.float64).reshape(4, 3); "
                        "t = L.linspace(0., 1., 12, dtype=L.float64).reshape(4, 3).softmax(1); "
                        "third(L, lambda x, t: L.nn.functional.cross_entropy(x * x, t), x, t)",
 "nll": "x = L.linspace(-2., 2., 12, dtype=L.float64).reshape(4, 3); t = L.tensor([0, 2, 1, 2]); "
        "w = L.tensor([1., 2., .5], dtype=L.float64); third(L, lambda x: L.nn.functional.nll_loss(x * x, t, w), x)",
 "bce": "x = L.linspace(0.1, 0.9, 12, dtype=L.float64).reshape(4, 3); t = x.flip(0).detach(); "
        "third(L, lambda x, t: L.nn.functional.binary_cross_entropy(x, t), x, t)",
 "bce_logits": f"x = {X}; t = L.linspace(0., 1., 24, dtype=L.float64).reshape(2, 3, 4); pw = L.tensor([1., 2., .5, "
               "3.], dtype=L.float64); third(L, lambda x, t: L.nn.functional.binary_cross_entropy_with_logits(x, t, "
               "pos_weight=pw), x, t)",
 "kl_div": f"x = {X}; t = L.linspace(0.1, 1., 24, dtype=L.float64).reshape(2, 3, 4); "
           "third(L, lambda x, t: L.nn.functional.kl_div(x, t, reduction='batchmean'), x, t)",
 "kl_div_log_target": f"x = {X}; t = {X}.flip(2); "
                      "third(L, lambda x, t: L.nn.functional.kl_div(x, t, reduction='sum', log_target=True), x, t)",
 "poisson_nll": f"x = {X}; t = L.linspace(0., 3., 24, dtype=L.float64).reshape(2, 3, 4); "
                "third(L, lambda x: L.nn.functional.poisson_nll_loss(x, t, log_input=True, full=True), x)",
 "poisson_nll_no_log": f"x = {X}; t = L.linspace(0., 3., 24, dtype=L.float64).reshape(2, 3, 4); "
                       "third(L, lambda x: L.nn.functional.poisson_nll_loss(x * x, t, log_input=False), x)",
 "gaussian_nll": f"x = {X}; t = {X}.flip(2); v = L.linspace(0.5, 2., 24, dtype=L.float64).reshape(2, 3, 4); "
                 "third(L, lambda x, v: L.nn.functional.gaussian_nll_loss(x, t, v, full=True), x, v)",
 "soft_margin": f"x = {X}; t = L.sign({X}.flip(2)); "
                "third(L, lambda x: L.nn.functional.soft_margin_loss(x, t), x)",
 "multilabel_soft_margin": "x = L.linspace(-2., 2., 12, dtype=L.float64).reshape(4, 3); "
                           "t = L.tensor([[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 0, 0]]); "
                           "third(L, lambda x: L.nn.functional.multilabel_soft_margin_loss(x, t), x)",
 "multi_margin_p2": "x = L.linspace(-2., 2., 12, dtype=L.float64).reshape(4, 3); t = L.tensor([0, 2, 1, 2]); "
                    "third(L, lambda x: L.nn.functional.multi_margin_loss(x * x, t, p=2, margin=2.), x)",
 "triplet_margin": f"a = {X}[0]; p = {X}[1]; n = {X}[1].flip(1); "
                   "third(L, lambda a, p: L.nn.functional.triplet_margin_loss(a, p, n, margin=3., swap=True), a, p)",
 "margin_ranking": "a = L.linspace(-1., 1., 5, dtype=L.float64); b = a.flip(0); y = L.tensor([1., -1., 1., 1., -1.], "
                   "dtype=L.float64); third(L, lambda a, b: L.nn.functional.margin_ranking_loss(a * a, b, y, "
                   "margin=0.2), a, b)",
 "cosine_embedding": f"a = {X}[0]; b = {X}[1]; y = L.tensor([1, -1, 1]); "
                     "third(L, lambda a, b: L.nn.functional.cosine_embedding_loss(a, b, y, margin=-0.5), a, b)",
 "ctc": "lp = L.linspace(-3., -0.1, 30, dtype=L.float64).reshape(5, 2, 3).log_softmax(2).detach(); "
        "t = L.tensor([[1, 2], [1, 1]]); third(L, lambda lp: L.nn.functional.ctc_loss(lp, t, [5, 4], [2, 2]), lp)",
 "mha": "x = L.linspace(-1., 1., 24, dtype=L.float64).reshape(3, 2, 4); L.manual_seed(0); "
        "m = L.nn.MultiheadAttention(4, 2).double(); third(L, lambda x: m(x, x, x)[0], x)",

 # channels_last inputs, empty batches, float32, and modules
 "conv2d_channels_last": f"x = {IMG}.to(memory_format=L.channels_last); "
                         "w = L.linspace(-1., 1., 54, dtype=L.float64).reshape(2, 3, 3, 3); "
                         "third(L, lambda x, w: L.nn.functional.conv2d(x, w, padding=1), x, w)",
 "conv2d_channels_last_weight": f"x = {IMG}; w = L.linspace(-1., 1., 54, dtype=L.float64).reshape(2, 3, 3, 3)"
                                ".to(memory_format=L.channels_last); "
                                "third(L, lambda x, w: L.nn.functional.conv2d(x, w, stride=2), x, w)",
 "conv_transpose2d_channels_last": f"x = {IMG}.to(memory_format=L.channels_last); "
                                   "w = L.linspace(-1., 1., 24, dtype=L.float64).reshape(3, 2, 2, 2); "
                                   "third(L, lambda x, w: L.nn.functional.conv_transpose2d(x, w, stride=2), x, w)",
 "conv_transpose2d_groups_dilated": f"x = {IMG}[:, :2]; w = L.linspace(-1., 1., 16, dtype=L.float64).reshape(2, 2, "
                                    "2, 2); third(L, lambda x, w: L.nn.functional.conv_transpose2d(x, w, groups=2, "
                                    "dilation=2, padding=1), x, w)",
 "conv1d_empty_batch": "x = L.ones(0, 3, 5, dtype=L.float64); w = L.linspace(-1., 1., 18, dtype=L.float64)"
                       ".reshape(2, 3, 3); third(L, lambda x, w: L.nn.functional.conv1d(x, w), x, w)",
 "conv3d": "x = L.linspace(-1., 1., 64, dtype=L.float64).reshape(1, 2, 2, 4, 4); "
           "w = L.linspace(-1., 1., 16, dtype=L.float64).reshape(2, 1, 2, 2, 2); "
           "third(L, lambda x, w: L.nn.functional.conv3d(x, w, groups=2, stride=(1, 2, 1)), x, w)",
 "conv2d_float32": "x = L.linspace(-2., 2., 96).reshape(2, 3, 4, 4); w = L.linspace(-1., 1., 24).reshape(2, 3, 2, 2); "
                   "third(L, lambda x, w: L.nn.functional.conv2d(x, w, padding=(1, 0)), x, w)",
 "conv2d_bias_module": "L.manual_seed(0); m = L.nn.Conv2d(3, 2, 2, bias=True).double(); "
                       f"x = {IMG}; third(L, lambda x: m(x * x), x)",
 "group_norm_channels_last": f"x = {IMG}.to(memory_format=L.channels_last); "
                             "third(L, lambda x: L.nn.functional.group_norm(x * x, 3), x)",
 "layer_norm_2d_shape": f"x = {X}; w = L.linspace(0.5, 1.5, 12, dtype=L.float64).reshape(3, 4); "
                        "third(L, lambda x, w: L.nn.functional.layer_norm(x * x, (3, 4), w), x, w)",
 "layer_norm_whole_input": f"x = {X}[0]; w = L.linspace(0.5, 1.5, 12, dtype=L.float64).reshape(3, 4); "
                           "b = L.zeros(3, 4, dtype=L.float64); "
                           "third(L, lambda x, w, b: L.nn.functional.layer_norm(x * x, (3, 4), w, b), x, w, b)",
 "layer_norm_float32": "x = L.linspace(-2., 2., 24).reshape(2, 3, 4); w = L.linspace(0.5, 1.5, 4); "
                       "third(L, lambda x, w: L.nn.functional.layer_norm(x * x, (4,), w), x, w)",
 "layer_norm_empty_batch": "x = L.ones(0, 4, dtype=L.float64); w = L.linspace(0.5, 1.5, 4, dtype=L.float64); "
                           "third(L, lambda x, w: L.nn.functional.layer_norm(x, (4,), w), x, w)",
 "softplus_float32": "x = L.linspace(-2., 2., 12); third(L, lambda x: L.nn.functional.softplus(x, beta=0.5), x)",
 "soft_margin_sum": f"x = {X}; t = L.sign({X}.flip(2)); "
                    "third(L, lambda x: L.nn.functional.soft_margin_loss(x, t, reduction='sum'), x)",
 "soft_margin_none": f"x = {X}; t = L.sign({X}.flip(2)); "
                     "third(L, lambda x: L.nn.functional.soft_margin_loss(x, t, reduction='none'), x)",
 "batch_norm_module_train": "L.manual_seed(0); m = L.nn.BatchNorm1d(3).double(); "
                            f"x = {X}; third(L, lambda x: m(x * x), x)",
 "instance_norm_affine_module": "m = L.nn.InstanceNorm1d(3, affine=True).double(); "
                                f"x = {X}; third(L, lambda x: m(x * x), x)",
 "transformer_layer": "L.manual_seed(0); m = L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.).double(); "
                      "x = L.linspace(-1., 1., 24, dtype=L.float64).reshape(3, 2, 4); third(L, m, x)",
 "gru": "x = L.linspace(-1., 1., 12, dtype=L.float64).reshape(2, 2, 3); L.manual_seed(0); "
        "r = L.nn.GRU(3, 2, bidirectional=True).double(); third(L, lambda x: r(x)[0], x)",
 "lstm_two_layers": "x = L.linspace(-1., 1., 12, dtype=L.float64).reshape(2, 2, 3); L.manual_seed(0); "
                    "r = L.nn.LSTM(3, 2, num_layers=2).double(); third(L, lambda x: r(x)[1][1], x)",
 "embedding_max_norm": "w = L.linspace(-1., 1., 12, dtype=L.float64).reshape(4, 3); i = L.tensor([0, 2, 2]); "
                       "third(L, lambda w: L.nn.functional.embedding(i, w * 3, max_norm=1.), w)",
 "max_unpool2d": f"x = {IMG}; y, i = L.nn.functional.max_pool2d({IMG}, 2, return_indices=True); "
                 "third(L, lambda y: L.nn.functional.max_unpool2d(y * y, i, 2), y.detach())",
 "avg_pool3d": "x = L.linspace(-1., 1., 64, dtype=L.float64).reshape(1, 1, 4, 4, 4); "
               "third(L, lambda x: L.nn.functional.avg_pool3d(x * x, 2, stride=1, divisor_override=3), x)",
 "adaptive_avg_pool3d": "x = L.linspace(-1., 1., 64, dtype=L.float64).reshape(1, 1, 4, 4, 4); "
                        "third(L, lambda x: L.nn.functional.adaptive_avg_pool3d(x * x, (3, 2, 1)), x)",
 "interpolate_trilinear": "x = L.linspace(-1., 1., 16, dtype=L.float64).reshape(1, 1, 2, 2, 4); "
                          "third(L, lambda x: L.nn.functional.interpolate(x * x, scale_factor=1.5, "
                          "mode='trilinear'), x)",
 "local_response_norm": f"x = {X}; third(L, lambda x: L.nn.functional.local_response_norm(x, 2), x)",
 "hinge_embedding": f"x = {X}; t = L.sign({X}.flip(2)); "
                    "third(L, lambda x: L.nn.functional.hinge_embedding_loss(x * x, t, margin=2.), x)",
 "multilabel_margin": "x = L.linspace(-1., 1., 8, dtype=L.float64).reshape(2, 4); t = L.tensor([[3, 0, -1, 1], "
                      "[1, 2, 3, -1]]); third(L, lambda x: L.nn.functional.multilabel_margin_loss(x * x, t), x)",
 "weight_norm_interface": "v = L.linspace(-1., 1., 6, dtype=L.float64).reshape(2, 3); g = L.tensor([[2.], [0.5]], "
                          "dtype=L.float64); third(L, lambda v, g: L._weight_norm(v, g, 0), v, g)",
}


def _program(code):
    """The program as a function of the library (``helpers.program_of``), with ``third`` in scope."""
    return program_of(code, third=third)


@pytest.mark.parametrize("name", THIRD)
def test_third_derivatives_through_layers_and_losses(name):
    twin(_program(THIRD[name]), ulps=NORM_ULPS if "norm" in name else 8 * COMPOSITE_ULPS)


# modules given an input in each layout: their outputs, the input's and the parameters' gradients
MODULES = {
 "Conv2d": ("L.nn.Conv2d(3, 4, 3, padding=1, stride=(2, 1))", (2, 3, 5, 6)),
 "Conv2d_groups": ("L.nn.Conv2d(3, 6, 2, groups=3, dilation=(1, 2))", (2, 3, 5, 6)),
 "ConvTranspose2d": ("L.nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1)", (2, 3, 5, 6)),
 "BatchNorm2d": ("L.nn.BatchNorm2d(3)", (2, 3, 5, 6)),
 "GroupNorm": ("L.nn.GroupNorm(1, 3)", (2, 3, 5, 6)),
 "InstanceNorm2d": ("L.nn.InstanceNorm2d(3, affine=True)", (2, 3, 5, 6)),
 "LayerNorm": ("L.nn.LayerNorm([5, 6])", (2, 3, 5, 6)),
 "MaxPool2d": ("L.nn.MaxPool2d(2, ceil_mode=True)", (2, 3, 5, 6)),
 "AvgPool2d": ("L.nn.AvgPool2d(3, stride=2, padding=1)", (2, 3, 5, 6)),
 "AdaptiveAvgPool2d": ("L.nn.AdaptiveAvgPool2d((2, 4))", (2, 3, 5, 6)),
 "AdaptiveMaxPool2d": ("L.nn.AdaptiveMaxPool2d((3, 2))", (2, 3, 5, 6)),
 "Upsample_bilinear": ("L.nn.Upsample(scale_factor=2, mode='bilinear')", (2, 3, 5, 6)),
 "Upsample_nearest": ("L.nn.Upsample(size=(7, 4))", (2, 3, 5, 6)),
 "PixelShuffle": ("L.nn.PixelShuffle(1)", (2, 3, 5, 6)),
 "ReflectionPad2d": ("L.nn.ReflectionPad2d((1, 2, 0, 3))", (2, 3, 5, 6)),
 "Dropout2d_eval": ("L.nn.Dropout2d().eval()", (2, 3, 5, 6)),
 "PReLU": ("L.nn.PReLU(3)", (2, 3, 5, 6)),
 "Softmax2d": ("L.nn.Softmax2d()", (2, 3, 5, 6)),
 "LogSoftmax_dim1": ("L.nn.LogSoftmax(1)", (2, 3, 5, 6)),
 "Hardswish": ("L.nn.Hardswish()", (2, 3, 5, 6)),
 "GELU": ("L.nn.GELU('tanh')", (2, 3, 5, 6)),
 "Flatten": ("L.nn.Flatten()", (2, 3, 5, 6)),
 "Linear_last_dim": ("L.nn.Linear(6, 2)", (2, 3, 5, 6)),
 "Bilinear_like_unfold": ("L.nn.Unfold(2, stride=2)", (2, 3, 5, 6)),
 "LocalResponseNorm": ("L.nn.LocalResponseNorm(2)", (2, 3, 5, 6)),
}


def _layout(L, shape, layout):
    # cubed: a gradient of a normalization over an input linear in the position nearly cancels
    base = L.linspace(-2., 2., max(1, math.prod(shape)), dtype=L.float64)[:math.prod(shape)] ** 3
    if layout == "channels_last":
        return base.reshape(shape).to(memory_format=L.channels_last)
    if layout == "noncontiguous":
        return base.reshape(shape[0], shape[1], shape[3], shape[2]).transpose(2, 3)
    if layout == "empty_batch":
        return L.ones(0, *shape[1:], dtype=L.float64)
    return base.reshape(shape)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "noncontiguous", "empty_batch"])
@pytest.mark.parametrize("name", MODULES)
def test_modules_in_each_layout(name, layout):
    make, shape = MODULES[name]

    def run(L):
        L.manual_seed(0)
        m = eval(make, {"L": L}).double()
        x = _layout(L, shape, layout).requires_grad_()
        out = m(x)
        # a cotangent that is not linear in the position: a normalization's input gradient of a
        # linear one nearly cancels, and its last bits are then all rounding
        cot = L.linspace(0.5, 1.5, max(out.numel(), 1), dtype=out.dtype)[:out.numel()] ** 2
        out.backward(cot.reshape(out.shape))
        return [out, x.grad] + [p.grad for p in m.parameters()]
    twin(run, ulps=NORM_ULPS if "Norm" in name else 4 * COMPOSITE_ULPS)
