"""Optimizers, learning-rate schedulers and ``nn.utils`` (gradient clipping, parametrizations,
packed sequences, weight norm, batch-norm fusion) given unusual arguments: each program runs with
``L`` torch and with ``L`` internals, and gives torch's values (dtypes, shapes, strides, grad_fn
names, state dicts) or raises torch's exception class with torch's message.

Before this round internals lacked ``fuse_conv_bn_eval``, ``fuse_conv_bn_weights``,
``fuse_linear_bn_eval``, ``fuse_linear_bn_weights``, ``convert_conv2d_weight_memory_format``,
``convert_conv3d_weight_memory_format`` and the deprecated ``clip_grad_norm`` (the ``fuse_*``,
``convert_*`` and ``clip_grad_norm_deprecated`` cases); the others held already and guard it."""
import warnings

import pytest
import torch
from helpers import assert_same_result_or_error, program_of

import internals

P = "L.nn.Parameter(L.linspace(-1., 2., 6).reshape(2, 3))"
Q = "L.nn.Parameter(L.linspace(0.5, 3., 4))"
def grads(*names):
    return "; ".join(f"{n}.grad = L.linspace(-2., 1., {n}.numel()).reshape({n}.shape)" for n in names)
CASES = {
 # clip_grad_norm_ / clip_grad_value_
 "clip_norm_basic": f"p = {P}; q = {Q}; {grads('p','q')}; n = L.nn.utils.clip_grad_norm_([p, q], 1.0); "
                    f"[n, p.grad, q.grad]",
 "clip_norm_inf": f"p = {P}; q = {Q}; {grads('p','q')}; "
                  f"n = L.nn.utils.clip_grad_norm_([p, q], 0.5, norm_type='inf'); [n, p.grad, q.grad]",
 "clip_norm_type1": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, 0.5, norm_type=1); [n, p.grad]",
 "clip_norm_type0": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, 0.5, norm_type=0); [n, p.grad]",
 "clip_norm_negative_max": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, -1.0); [n, p.grad]",
 "clip_norm_no_grads": f"p = {P}; n = L.nn.utils.clip_grad_norm_([p], 1.0); [n]",
 "clip_norm_empty_list": "n = L.nn.utils.clip_grad_norm_([], 1.0); [n]",
 "clip_norm_nan_error": f"p = {P}; p.grad = L.tensor([[float('nan'), 1., 2.], [0., 0., 0.]]); "
                        f"L.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)",
 "clip_norm_nan_silent": f"p = {P}; p.grad = L.tensor([[float('nan'), 1., 2.], [0., 0., 0.]]); "
                         f"n = L.nn.utils.clip_grad_norm_(p, 1.0); [n, p.grad]",
 "clip_norm_inf_grad": f"p = {P}; p.grad = L.tensor([[float('inf'), 1., 2.], [0., 0., 0.]]); "
                       f"n = L.nn.utils.clip_grad_norm_(p, 1.0, norm_type='inf'); [n, p.grad]",
 "clip_norm_float64_mixed": f"p = {P}; q = L.nn.Parameter(L.ones(3, dtype=L.float64)); {grads('p','q')}; "
                            f"n = L.nn.utils.clip_grad_norm_([p, q], 1.0); [n, p.grad, q.grad]",
 "clip_norm_foreach": f"p = {P}; q = {Q}; {grads('p','q')}; "
                      f"n = L.nn.utils.clip_grad_norm_([p, q], 1.0, foreach=True); [n, p.grad, q.grad]",
 "clip_norm_generator": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_((x for x in [p]), 1.0); [n, p.grad]",
 "clip_norm_int_max": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, 1); [n, p.grad]",
 "clip_norm_tensor_max": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, L.tensor(0.5)); [n, p.grad]",
 "get_total_norm": "a = L.linspace(-1., 2., 5); b = L.ones(2, 2); [L.nn.utils.get_total_norm([a, b], 3.0)]",
 "clip_grads_with_norm": f"p = {P}; {grads('p')}; L.nn.utils.clip_grads_with_norm_([p], 1.0, L.tensor(4.0)); [p.grad]",
 "clip_value": f"p = {P}; q = {Q}; {grads('p','q')}; L.nn.utils.clip_grad_value_([p, q], 0.5); [p.grad, q.grad]",
 "clip_value_negative": f"p = {P}; {grads('p')}; L.nn.utils.clip_grad_value_(p, -0.5); [p.grad]",
 "clip_value_int_grad": f"p = {P}; p.grad = L.ones(2, 3); L.nn.utils.clip_grad_value_(p, 0); [p.grad]",
 "clip_value_foreach": f"p = {P}; {grads('p')}; L.nn.utils.clip_grad_value_(p, 0.25, foreach=True); [p.grad]",
 # parameters_to_vector / vector_to_parameters
 "params_to_vector": f"p = {P}; q = {Q}; [L.nn.utils.parameters_to_vector([p, q])]",
 "vector_to_params": f"p = {P}; q = {Q}; L.nn.utils.vector_to_parameters(L.arange(10.), [p, q]); [p, q]",
 "vector_to_params_not_tensor": f"p = {P}; L.nn.utils.vector_to_parameters([1., 2.], [p])",
 # rnn packing
 "pack_sorted": "x = L.arange(12.).reshape(4, 3); pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1]); "
                "[pk.data, pk.batch_sizes, pk.sorted_indices]",
 "pack_unsorted_error": "x = L.arange(12.).reshape(4, 3); L.nn.utils.rnn.pack_padded_sequence(x, [1, 4, 2])",
 "pack_unsorted_ok": "x = L.arange(12.).reshape(4, 3); "
                     "pk = L.nn.utils.rnn.pack_padded_sequence(x, [1, 4, 2], enforce_sorted=False); "
                     "[pk.data, pk.batch_sizes, pk.sorted_indices, pk.unsorted_indices]",
 "pack_zero_length": "x = L.arange(12.).reshape(4, 3); L.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 0])",
 "pack_too_long": "x = L.arange(12.).reshape(4, 3); L.nn.utils.rnn.pack_padded_sequence(x, [5, 2, 1])",
 "pack_lengths_tensor": "x = L.arange(12.).reshape(3, 4).T; "
                        "pk = L.nn.utils.rnn.pack_padded_sequence(x, L.tensor([4, 3, 1])); "
                        "[pk.data, pk.batch_sizes]",
 "pack_batch_first": "x = L.arange(24.).reshape(3, 4, 2); "
                     "pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 3, 1], batch_first=True); "
                     "[pk.data, pk.batch_sizes]",
 "pad_packed_roundtrip": "x = L.arange(24.).reshape(3, 4, 2); "
                         "pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 3, 1], batch_first=True); out, "
                         "n = L.nn.utils.rnn.pad_packed_sequence(pk, batch_first=True, padding_value=-1., "
                         "total_length=5); [out, n]",
 "pad_packed_total_short": "x = L.arange(12.).reshape(4, 3); "
                           "pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1]); "
                           "L.nn.utils.rnn.pad_packed_sequence(pk, total_length=3)",
 "pad_sequence": "[L.nn.utils.rnn.pad_sequence([L.ones(3), L.arange(1.), L.arange(2.)], batch_first=True, "
                 "padding_value=7.)]",
 "pad_sequence_left": "[L.nn.utils.rnn.pad_sequence([L.ones(3), L.arange(1.), L.arange(2.)], padding_side='left')]",
 "pad_sequence_bad_side": "L.nn.utils.rnn.pad_sequence([L.ones(3)], padding_side='middle')",
 "pack_sequence_unsorted": "pk = L.nn.utils.rnn.pack_sequence([L.ones(2), L.arange(3.)], enforce_sorted=False); "
                           "[pk.data, pk.batch_sizes, pk.sorted_indices]",
 "unpad_sequence": "x = L.arange(12.).reshape(4, 3); list(L.nn.utils.rnn.unpad_sequence(x, L.tensor([4, 2, 1])))",
 "unpack_sequence": "pk = L.nn.utils.rnn.pack_sequence([L.arange(3.), L.ones(2)]); "
                    "list(L.nn.utils.rnn.unpack_sequence(pk))",
 "packed_to_double": "pk = L.nn.utils.rnn.pack_sequence([L.arange(3.), L.ones(2)]); d = pk.double(); "
                     "[d.data, d.batch_sizes, d.is_cuda]",
 "pack_grad_fn": "x = L.arange(12.).reshape(4, 3).requires_grad_(); "
                 "pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1]); [type(pk.data.grad_fn).__name__]",
 # weight_norm / spectral / parametrizations
 "weight_norm_old": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                    "m.bias.data.zero_(); m = L.nn.utils.weight_norm(m); "
                    "[m.weight_g, m.weight_v, m(L.ones(1, 3)), type(m.weight.grad_fn).__name__]",
 "weight_norm_dim_none": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                         "m = L.nn.utils.weight_norm(m, dim=None); [m.weight_g, m.weight]",
 "weight_norm_twice": "m = L.nn.Linear(3, 2); L.nn.utils.weight_norm(m); L.nn.utils.weight_norm(m)",
 "remove_weight_norm_missing": "m = L.nn.Linear(3, 2); L.nn.utils.remove_weight_norm(m)",
 "param_weight_norm": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                      "m = L.nn.utils.parametrizations.weight_norm(m); [m.parametrizations.weight.original0, "
                      "m.parametrizations.weight.original1, m.weight, type(m.weight.grad_fn).__name__]",
 "param_weight_norm_state_dict": "m = L.nn.Linear(3, 2); m = L.nn.utils.parametrizations.weight_norm(m); "
                                 "sorted(m.state_dict())",
 "param_orthogonal_names": "m = L.nn.Linear(3, 3); m = L.nn.utils.parametrizations.orthogonal(m); "
                           "sorted(m.state_dict())",
 "param_spectral_norm_names": "m = L.nn.Linear(3, 2); m = L.nn.utils.parametrizations.spectral_norm(m); "
                              "sorted(m.state_dict())",
 "register_parametrization_bad_shape": "m = L.nn.Linear(3, 2)\nclass Bad(L.nn.Module):\n"
                                       "  def forward(self, x): return x[0]\n"
                                       "L.nn.utils.parametrize.register_parametrization(m, 'weight', Bad())",
 "remove_parametrization_missing": "m = L.nn.Linear(3, 2); L.nn.utils.parametrize.remove_parametrizations(m, 'weight')",
 "remove_parametrization_keep": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                                "L.nn.utils.parametrizations.weight_norm(m); "
                                "L.nn.utils.parametrize.remove_parametrizations(m, 'weight', "
                                "leave_parametrized=True); "
                                "[m.weight, type(m.weight).__name__, L.nn.utils.parametrize.is_parametrized(m)]",
 "is_parametrized_name": "m = L.nn.Linear(3, 2); L.nn.utils.parametrizations.weight_norm(m); "
                         "[L.nn.utils.parametrize.is_parametrized(m, 'weight'), "
                         "L.nn.utils.parametrize.is_parametrized(m, 'bias'), type(m).__name__]",
 "cached_parametrization": "m = L.nn.Linear(3, 2); L.nn.utils.parametrizations.weight_norm(m)\n"
                           "with L.nn.utils.parametrize.cached():\n  r = m.weight is m.weight\n[r]",
 "fuse_conv_bn_conv_training": "c = L.nn.Conv2d(1, 2, 1); b = L.nn.BatchNorm2d(2).eval(); "
                               "L.nn.utils.fuse_conv_bn_eval(c, b)",
}
# optimizer and scheduler programs
CASES.update({
 "sgd_state_dict_roundtrip": f"p = {P}; {grads('p')}; o = L.optim.SGD([p], lr=0.1, momentum=0.9); o.step(); "
                             f"sd = o.state_dict(); o2 = L.optim.SGD([p], lr=0.5, momentum=0.9); "
                             f"o2.load_state_dict(sd); o2.step(); "
                             f"[p, o2.param_groups[0]['lr'], sorted(o2.state_dict()['param_groups'][0])]",
 "adam_load_wrong_groups": f"p = {P}; q = {Q}; o = L.optim.Adam([p]); "
                           f"o2 = L.optim.Adam([{{'params': [p]}}, {{'params': [q]}}]); "
                           f"o.load_state_dict(o2.state_dict())",
 "adam_load_wrong_size": f"p = {P}; q = {Q}; o = L.optim.Adam([p]); o2 = L.optim.Adam([p, q]); "
                         f"o.load_state_dict(o2.state_dict())",
 "sgd_nesterov_no_momentum": f"p = {P}; L.optim.SGD([p], lr=0.1, nesterov=True)",
 "sgd_negative_lr": f"p = {P}; L.optim.SGD([p], lr=-0.1)",
 "adam_bad_beta": f"p = {P}; L.optim.Adam([p], betas=(1.0, 0.9))",
 "rmsprop_bad_alpha": f"p = {P}; L.optim.RMSprop([p], alpha=-1)",
 "rprop_bad_etas": f"p = {P}; L.optim.Rprop([p], etas=(1.5, 0.5))",
 "adagrad_bad_lr_decay": f"p = {P}; L.optim.Adagrad([p], lr_decay=-1)",
 "optimizer_add_group_overlap": f"p = {P}; o = L.optim.SGD([p], lr=0.1); o.add_param_group({{'params': p}})",
 "optimizer_add_group_missing_lr": f"p = {P}; q = {Q}; o = L.optim.SGD([p], lr=0.1); "
                                   f"o.add_param_group({{'params': q, 'momentum': 0.5}}); "
                                   f"[o.param_groups[1]['lr'], o.param_groups[1]['momentum']]",
 "zero_grad_keep": f"p = {P}; {grads('p')}; o = L.optim.SGD([p], lr=0.1); o.zero_grad(set_to_none=False); [p.grad]",
 "zero_grad_none": f"p = {P}; {grads('p')}; o = L.optim.SGD([p], lr=0.1); o.zero_grad(); [p.grad is None]",
 "sgd_closure": f"p = {P}; o = L.optim.SGD([p], lr=0.1)\ndef c():\n  o.zero_grad(); l = (p * p).sum(); "
                f"l.backward(); return l\nl = o.step(c); [l, p]",
 "adamw_state_keys": f"p = {P}; {grads('p')}; o = L.optim.AdamW([p], amsgrad=True); o.step(); sorted(o.state[p])",
 "nadam_state_dtypes": f"p = {P}; {grads('p')}; o = L.optim.NAdam([p]); o.step(); "
                       f"[o.state[p]['mu_product'], o.state[p]['step']]",
 "rprop_state": f"p = {P}; {grads('p')}; o = L.optim.Rprop([p], lr=0.05); o.step(); o.step(); "
                f"[o.state[p]['step_size'], o.state[p]['prev'], p]",
 "lbfgs_two_groups": f"p = {P}; q = {Q}; L.optim.LBFGS([{{'params': [p]}}, {{'params': [q]}}])",
 "sparse_adam_dense": f"p = {P}; {grads('p')}; o = L.optim.SparseAdam([p]); o.step()",
 # schedulers
 "steplr": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.StepLR(o, 2, gamma=0.5); r = []\n"
           f"for _ in range(5):\n  o.step(); s.step(); r.append(s.get_last_lr()[0])\nr",
 "cosine_warm": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                f"s = L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.1); r = []\n"
                f"for _ in range(8):\n  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "cosine_warm_bad_T0": f"p = {P}; o = L.optim.SGD([p], lr=1.0); L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 0)",
 "onecycle": f"p = {P}; o = L.optim.SGD([p], lr=1.0, momentum=0.9); "
             f"s = L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=6); r = []\nfor _ in range(6):\n"
             f"  o.step(); s.step(); r.append((o.param_groups[0]['lr'], o.param_groups[0]['momentum']))\nr",
 "onecycle_overstep": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                      f"s = L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=2)\nfor _ in range(3):\n"
                      f"  o.step(); s.step()",
 "cyclic": f"p = {P}; o = L.optim.SGD([p], lr=1.0, momentum=0.9); "
           f"s = L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode='triangular2'); r = []\n"
           f"for _ in range(7):\n  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "plateau": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
            f"s = L.optim.lr_scheduler.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1); r = []\n"
            f"for m in [1., 1., 1., 1., 0.5, 1., 1., 1.]:\n  s.step(m); r.append(o.param_groups[0]['lr'])\nr",
 "plateau_bad_factor": f"p = {P}; o = L.optim.SGD([p], lr=1.0); L.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0)",
 "sequential": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
               f"a = L.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2); "
               f"b = L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9); "
               f"s = L.optim.lr_scheduler.SequentialLR(o, [a, b], milestones=[2]); r = []\nfor _ in range(5):\n"
               f"  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "sequential_bad_milestones": f"p = {P}; o = L.optim.SGD([p], lr=1.0); a = L.optim.lr_scheduler.ConstantLR(o); "
                              f"b = L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9); "
                              f"L.optim.lr_scheduler.SequentialLR(o, [a, b], milestones=[2, 3])",
 "chained": f"p = {P}; o = L.optim.SGD([p], lr=1.0); a = L.optim.lr_scheduler.StepLR(o, 1, gamma=0.5); "
            f"b = L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9); "
            f"s = L.optim.lr_scheduler.ChainedScheduler([a, b]); r = []\nfor _ in range(3):\n  o.step(); s.step(); "
            f"r.append(o.param_groups[0]['lr'])\nr",
 "lambda_state_dict": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                      f"s = L.optim.lr_scheduler.LambdaLR(o, lambda e: 0.5 ** e); o.step(); s.step(); "
                      f"sorted(s.state_dict())",
 "multistep_state_roundtrip": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                              f"s = L.optim.lr_scheduler.MultiStepLR(o, [1, 3], gamma=0.1)\nfor _ in range(2):\n"
                              f"  o.step(); s.step()\nsd = s.state_dict(); o2 = L.optim.SGD([p], lr=1.0); "
                              f"s2 = L.optim.lr_scheduler.MultiStepLR(o2, [5]); s2.load_state_dict(sd); o2.step(); "
                              f"s2.step(); o2.step(); s2.step(); "
                              f"[s2.last_epoch, s2.get_last_lr(), dict(s2.milestones)]",
 "polynomial": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
               f"s = L.optim.lr_scheduler.PolynomialLR(o, total_iters=3, power=2.0); r = []\nfor _ in range(5):\n"
               f"  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "linear_bad_factor": f"p = {P}; o = L.optim.SGD([p], lr=1.0); L.optim.lr_scheduler.LinearLR(o, start_factor=0)",
 "constant_bad_factor": f"p = {P}; o = L.optim.SGD([p], lr=1.0); L.optim.lr_scheduler.ConstantLR(o, factor=2)",
 "scheduler_tensor_lr": f"p = {P}; o = L.optim.SGD([p], lr=L.tensor(1.0)); "
                        f"s = L.optim.lr_scheduler.ExponentialLR(o, 0.5); o.step(); s.step(); "
                        f"[o.param_groups[0]['lr']]",
 "scheduler_initial_lr_missing": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                                 f"L.optim.lr_scheduler.StepLR(o, 2, last_epoch=3)",
 "multiplicative": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                   f"s = L.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9); r = []\nfor _ in range(3):\n"
                   f"  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "cosine_annealing": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                     f"s = L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3, eta_min=0.1); r = []\n"
                     f"for _ in range(8):\n  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
})
CASES.update({
 "optimizer_dup_param": f"p = {P}; o = L.optim.SGD([p, p], lr=0.1); [len(o.param_groups[0]['params'])]",
 "fuse_conv_bn_training": "c = L.nn.Conv2d(1, 2, 1); b = L.nn.BatchNorm2d(2); L.nn.utils.fuse_conv_bn_eval(c, b)",
 "fuse_conv_bn_eval": "c = L.nn.Conv2d(2, 3, 2).eval(); "
                      "c.weight.data = L.linspace(-1., 1., 24).reshape(3, 2, 2, 2); "
                      "c.bias.data = L.tensor([0.5, -1., 2.]); b = L.nn.BatchNorm2d(3).eval(); "
                      "b.running_mean += L.tensor([1., 2., 3.]); b.running_var *= 4.; "
                      "b.weight.data = L.tensor([2., 3., 4.]); b.bias.data = L.tensor([0.1, 0.2, 0.3]); "
                      "f = L.nn.utils.fuse_conv_bn_eval(c, b); x = L.linspace(-2., 2., 32).reshape(1, 2, 4, 4); "
                      "[f.weight, f.bias, f(x), type(f.weight).__name__, f.weight.requires_grad, "
                      "c.weight is f.weight]",
 "fuse_conv_transpose_bn": "c = L.nn.ConvTranspose2d(2, 3, 2, bias=False).eval(); "
                           "c.weight.data = L.linspace(-1., 1., 24).reshape(2, 3, 2, 2); "
                           "b = L.nn.BatchNorm2d(3, affine=False).eval(); b.running_var += 1.; "
                           "f = L.nn.utils.fuse_conv_bn_eval(c, b, transpose=True); [f.weight, f.bias]",
 "fuse_conv_bn_no_stats": "c = L.nn.Conv2d(1, 2, 1).eval(); "
                          "b = L.nn.BatchNorm2d(2, track_running_stats=False).eval(); "
                          "L.nn.utils.fuse_conv_bn_eval(c, b)",
 "fuse_linear_bn_eval": "m = L.nn.Linear(3, 2).eval(); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                        "m.bias.data = L.tensor([1., -1.]); b = L.nn.BatchNorm1d(2).eval(); "
                        "b.running_mean += 0.5; b.running_var *= 3.; f = L.nn.utils.fuse_linear_bn_eval(m, b); "
                        "[f.weight, f.bias, f(L.ones(2, 3))]",
 "fuse_linear_bn_mismatch": "m = L.nn.Linear(3, 2).eval(); b = L.nn.BatchNorm1d(3).eval(); "
                            "L.nn.utils.fuse_linear_bn_eval(m, b)",
 "fuse_linear_bn_one_feature": "m = L.nn.Linear(3, 2, bias=False).eval(); "
                               "m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                               "b = L.nn.BatchNorm1d(1).eval(); b.running_var += 1.; "
                               "f = L.nn.utils.fuse_linear_bn_eval(m, b); [f.weight, f.bias]",
 "fuse_conv_bn_weights_float64": "w = L.linspace(-1., 1., 8, dtype=L.float64).reshape(2, 1, 2, 2); "
                                 "rm = L.tensor([0.5, 1.]); rv = L.tensor([2., 3.]); "
                                 "fw, fb = L.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None); "
                                 "[fw, fb, fw.requires_grad]",
 "convert_conv2d_memory_format": "m = L.nn.Sequential(L.nn.Conv2d(2, 3, 2), L.nn.ReLU(), "
                                 "L.nn.Sequential(L.nn.ConvTranspose2d(3, 2, 2)), L.nn.Conv1d(2, 2, 1)); "
                                 "p = m[0].weight; "
                                 "L.nn.utils.convert_conv2d_weight_memory_format(m, L.channels_last); "
                                 "[m[0].weight.stride(), m[2][0].weight.stride(), m[3].weight.stride(), "
                                 "m[0].weight is p]",
 "convert_conv3d_memory_format": "m = L.nn.Sequential(L.nn.Conv3d(2, 3, 2), L.nn.Conv2d(2, 2, 2)); "
                                 "L.nn.utils.convert_conv3d_weight_memory_format(m, L.channels_last_3d); "
                                 "[m[0].weight.stride(), m[1].weight.stride()]",
 "clip_grad_norm_deprecated": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm(p, 1.0); [n, p.grad]",
 "clip_norm_huge_norm_type": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, 1.0, norm_type=100.); "
                             f"[n, p.grad]",
 "clip_norm_negative_norm_type": f"p = {P}; {grads('p')}; n = L.nn.utils.clip_grad_norm_(p, 1.0, norm_type=-2.); "
                                 f"[n, p.grad]",
 "clip_norm_half": "p = L.nn.Parameter(L.ones(3, dtype=L.float16)); p.grad = L.full((3,), 300., dtype=L.float16); "
                   "n = L.nn.utils.clip_grad_norm_(p, 1.0); [n, p.grad]",
 "clip_value_half": "p = L.nn.Parameter(L.ones(3, dtype=L.float16)); "
                    "p.grad = L.tensor([-3., 0.1, 9.], dtype=L.float16); L.nn.utils.clip_grad_value_(p, 0.3); "
                    "[p.grad]",
 "get_total_norm_empty": "[L.nn.utils.get_total_norm([])]",
 "get_total_norm_single_tensor": "[L.nn.utils.get_total_norm(L.tensor([3., 4.]))]",
 "pack_empty_batch": "x = L.zeros(0, 0); L.nn.utils.rnn.pack_padded_sequence(x, [])",
 "pack_2d_lengths": "x = L.arange(12.).reshape(4, 3); L.nn.utils.rnn.pack_padded_sequence(x, L.tensor([[4, 2, 1]]))",
 "pack_sequence_empty_list": "L.nn.utils.rnn.pack_sequence([])",
 "pad_sequence_empty_list": "L.nn.utils.rnn.pad_sequence([])",
 "pad_sequence_mixed_trailing": "L.nn.utils.rnn.pad_sequence([L.ones(2, 3), L.ones(2, 4)])",
 "pad_sequence_int": "[L.nn.utils.rnn.pad_sequence([L.arange(3), L.arange(1)], padding_value=-1)]",
 "packed_sequence_to_dtype": "pk = L.nn.utils.rnn.pack_sequence([L.arange(3.), L.ones(2)]); h = pk.to(L.float64); "
                             "[h.data, h.batch_sizes, pk.is_pinned()]",
 "lstm_packed": "L.manual_seed(0); m = L.nn.GRU(2, 3)\n"
                "for q in m.parameters(): q.data = L.linspace(-0.5, 0.5, q.numel()).reshape(q.shape)\n"
                "x = L.linspace(-1., 1., 16).reshape(4, 2, 2); "
                "pk = L.nn.utils.rnn.pack_padded_sequence(x, [4, 2]); out, h = m(pk); "
                "[out.data, out.batch_sizes, h]",
 "orthogonal_values": "m = L.nn.Linear(3, 3); m.weight.data = L.linspace(-1., 1., 9).reshape(3, 3) + L.eye(3); "
                      "L.nn.utils.parametrizations.orthogonal(m); [m.weight @ m.weight.T]",
 "spectral_norm_eval": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                       "L.nn.utils.parametrizations.spectral_norm(m); m.eval(); "
                       "[sorted(m.parametrizations.weight[0].state_dict())]",
 "parametrization_unsafe": "m = L.nn.Linear(3, 2)\nclass T(L.nn.Module):\n  def forward(self, x): return x.T\n"
                           "L.nn.utils.parametrize.register_parametrization(m, 'weight', T(), unsafe=True); "
                           "[m.weight.shape]",
 "parametrization_right_inverse": "m = L.nn.Linear(3, 2)\nclass Double(L.nn.Module):\n"
                                  "  def forward(self, x): return 2 * x\n"
                                  "  def right_inverse(self, x): return x / 2\nm.weight.data = L.ones(2, 3); "
                                  "L.nn.utils.parametrize.register_parametrization(m, 'weight', Double()); "
                                  "m.weight = L.full((2, 3), 4.); [m.parametrizations.weight.original, m.weight]",
 "parametrization_no_right_inverse_set": "m = L.nn.Linear(3, 2)\nclass Double(L.nn.Module):\n"
                                         "  def forward(self, x): return 2 * x\n"
                                         "L.nn.utils.parametrize.register_parametrization(m, 'weight', Double()); "
                                         "m.weight = L.ones(2, 3)",
 "parametrization_buffer": "m = L.nn.BatchNorm1d(2)\nclass Double(L.nn.Module):\n"
                           "  def forward(self, x): return 2 * x\n"
                           "L.nn.utils.parametrize.register_parametrization(m, 'running_mean', Double()); "
                           "[sorted(m.state_dict()), m.running_mean]",
 "parametrization_missing_tensor": "m = L.nn.Linear(3, 2)\nclass Double(L.nn.Module):\n"
                                   "  def forward(self, x): return 2 * x\n"
                                   "L.nn.utils.parametrize.register_parametrization(m, 'nothing', Double())",
 "weight_norm_grad_fn": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                        "L.nn.utils.parametrizations.weight_norm(m); y = m(L.ones(1, 3)).sum(); y.backward(); "
                        "[m.parametrizations.weight.original0.grad, m.parametrizations.weight.original1.grad, "
                        "type(m.weight.grad_fn).__name__]",
 "weight_norm_dim1": "m = L.nn.Linear(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                     "L.nn.utils.parametrizations.weight_norm(m, dim=1); "
                     "[m.parametrizations.weight.original0, m.weight]",
 "spectral_norm_old_conv_transpose": "m = L.nn.ConvTranspose2d(2, 3, 2); m = L.nn.utils.spectral_norm(m); "
                                     "sorted(m.state_dict())",
 "asgd_state": f"p = {P}; {grads('p')}; o = L.optim.ASGD([p], lr=0.1, t0=1); o.step(); o.step(); "
               f"[o.state[p]['eta'], o.state[p]['mu'], o.state[p]['ax'], p]",
 "lr_scheduler_verbose_deprecated": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                                    f"s = L.optim.lr_scheduler.StepLR(o, 2, verbose=True); [s.get_last_lr()]",
 "cyclic_exp_range": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, "
                     f"step_size_up=2, mode='exp_range', gamma=0.9, cycle_momentum=False); r = []\n"
                     f"for _ in range(5):\n  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "onecycle_linear_three_phase": f"p = {P}; o = L.optim.Adam([p], lr=1.0); s = L.optim.lr_scheduler.OneCycleLR(o, "
                                f"max_lr=[1.0], epochs=2, steps_per_epoch=3, anneal_strategy='linear', "
                                f"three_phase=True); r = []\nfor _ in range(6):\n  o.step(); s.step(); "
                                f"r.append((o.param_groups[0]['lr'], o.param_groups[0]['betas']))\nr",
 "onecycle_bad_strategy": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                          f"L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=3, anneal_strategy='cubic')",
 "plateau_max_rel": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.ReduceLROnPlateau(o, "
                    f"mode='max', threshold_mode='abs', threshold=0.1, patience=0, min_lr=0.3); r = []\n"
                    f"for m in [1., 1.05, 1.2, 1.2, 1.2, 1.2]:\n  s.step(m); r.append(o.param_groups[0]['lr'])\nr",
 "plateau_state_dict": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.ReduceLROnPlateau(o); "
                       f"s.step(1.0); sorted(s.state_dict())",
 "swa_lr": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=3); "
           f"r = []\nfor _ in range(4):\n  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
 "swa_lr_bad_strategy": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                        f"L.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_strategy='exp')",
})
CASES.update({
 "cyclic_no_momentum": f"p = {P}; o = L.optim.Adam([p], lr=1.0); "
                       f"s = L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, step_size_up=2); "
                       f"r = [o.param_groups[0]['betas']]\nfor _ in range(3):\n  o.step(); s.step(); "
                       f"r.append((o.param_groups[0]['lr'], o.param_groups[0]['betas']))\nr",
 "cyclic_sgd_momentum_zero": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0); "
                             "[kv for kv in sorted(o.param_groups[0].items()) if kv[0] != 'params']",
 "named_params_state_dict": "m = L.nn.Linear(2, 2); o = L.optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9); "
                            "sd = o.state_dict(); "
                            "[sd['param_groups'][0]['param_names'], sd['param_groups'][0]['params']]",
 "named_mixed_groups": "m = L.nn.Linear(2, 2); o = L.optim.SGD(m.named_parameters(), lr=0.1); "
                       "o.add_param_group({'params': [L.nn.Parameter(L.ones(1))]})",
 "mixed_dtype_foreach": "p = L.nn.Parameter(L.ones(2)); q = L.nn.Parameter(L.ones(3, dtype=L.float64)); "
                        "p.grad = L.full((2,), 0.5); q.grad = L.full((3,), -0.25, dtype=L.float64); "
                        "o = L.optim.RMSprop([p, q], foreach=True, momentum=0.5); o.step(); o.step(); "
                        "[p, q, o.state[q]['momentum_buffer']]",
 "empty_param_foreach": "p = L.nn.Parameter(L.ones(0)); q = L.nn.Parameter(L.ones(2)); p.grad = L.ones(0); "
                        "q.grad = L.ones(2); o = L.optim.NAdam([p, q], foreach=True); o.step(); "
                        "[p, q, o.state[p]['mu_product']]",
 "radam_foreach_tensor_lr": "p = L.nn.Parameter(L.ones(2)); p.grad = L.ones(2); "
                            "o = L.optim.RAdam([p], lr=L.tensor(0.1), foreach=True); o.step(); [p]",
 "adagrad_foreach_sparse": "p = L.nn.Parameter(L.ones(3, 2)); "
                           "p.grad = L.sparse_coo_tensor(L.tensor([[0, 2]]), L.ones(2, 2), (3, 2)); "
                           "o = L.optim.Adagrad([p], foreach=True); o.step(); [p]",
 "adamax_foreach_complex": "p = L.nn.Parameter(L.tensor([1+1j, 2-1j])); p.grad = L.tensor([0.5-1j, 1+0j]); "
                           "o = L.optim.Adamax([p], foreach=True, lr=0.1); o.step(); o.step(); [p]",
 "rprop_foreach_no_grad_param": "p = L.nn.Parameter(L.ones(2)); q = L.nn.Parameter(L.ones(2)); "
                                "p.grad = L.ones(2); o = L.optim.Rprop([p, q], foreach=True); o.step(); "
                                "[p, q, len(o.state)]",
 "foreach_differentiable": "p = L.nn.Parameter(L.ones(2)); p.grad = L.ones(2); "
                           "o = L.optim.Adadelta([p], foreach=True, differentiable=True); o.step()",
 "clip_complex": "p = L.nn.Parameter(L.tensor([1+1j, 2-1j])); p.grad = L.tensor([3+4j, 0j]); "
                 "n = L.nn.utils.clip_grad_norm_(p, 1.0); [n, p.grad]",
 "clip_not_tensor": "L.nn.utils.clip_grad_norm_([1.0], 1.0)",
 "clip_value_not_tensor": "L.nn.utils.clip_grad_value_([1.0], 1.0)",
 "vector_to_params_size_mismatch": f"p = {P}; L.nn.utils.vector_to_parameters(L.arange(3.), [p])",
 "params_to_vector_grad_fn": f"p = {P}; v = L.nn.utils.parameters_to_vector([p, p]); [v, type(v.grad_fn).__name__]",
 "remove_parametrization_not_leave": "m = L.nn.Linear(3, 2); "
                                     "m.weight.data = L.linspace(-1., 1., 6).reshape(2, 3); "
                                     "L.nn.utils.parametrizations.weight_norm(m); "
                                     "L.nn.utils.parametrize.remove_parametrizations(m, 'weight', "
                                     "leave_parametrized=False)",
 "weight_norm_embedding": "m = L.nn.Embedding(3, 2); m.weight.data = L.linspace(-1., 1., 6).reshape(3, 2); "
                          "L.nn.utils.parametrizations.weight_norm(m); "
                          "[m.weight, m.parametrizations.weight.original0.shape]",
 "scheduler_load_changes_lambda": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                                  f"s = L.optim.lr_scheduler.StepLR(o, 3, gamma=0.5)\nfor _ in range(4):\n"
                                  f"  o.step(); s.step()\nsd = s.state_dict(); sd['gamma'] = 0.1; "
                                  f"s.load_state_dict(sd); o.step(); s.step(); o.step(); s.step(); "
                                  f"[o.param_groups[0]['lr'], s.last_epoch, s.gamma]",
 "scheduler_step_before_optimizer": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                                    f"s = L.optim.lr_scheduler.StepLR(o, 1, gamma=0.5); s.step(); "
                                    f"[o.param_groups[0]['lr']]",
 "scheduler_epoch_arg": f"p = {P}; o = L.optim.SGD([p], lr=1.0); s = L.optim.lr_scheduler.StepLR(o, 1, gamma=0.5); "
                        f"o.step(); s.step(3); [o.param_groups[0]['lr'], s.last_epoch]",
 "exponential_tensor_gamma": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                             f"s = L.optim.lr_scheduler.ExponentialLR(o, gamma=L.tensor(0.5)); o.step(); s.step(); "
                             f"[o.param_groups[0]['lr']]",
 "lambda_wrong_count": f"p = {P}; q = {Q}; o = L.optim.SGD([{{'params': [p]}}, {{'params': [q]}}], lr=1.0); "
                       f"L.optim.lr_scheduler.LambdaLR(o, [lambda e: 1.0])",
 "linear_lr_values": f"p = {P}; o = L.optim.SGD([p], lr=0.5); "
                     f"s = L.optim.lr_scheduler.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=3); "
                     f"r = [o.param_groups[0]['lr']]\nfor _ in range(4):\n  o.step(); s.step(); "
                     f"r.append(o.param_groups[0]['lr'])\nr",
 "multistep_duplicates": f"p = {P}; o = L.optim.SGD([p], lr=1.0); "
                         f"s = L.optim.lr_scheduler.MultiStepLR(o, [2, 2], gamma=0.5); r = []\nfor _ in range(3):\n"
                         f"  o.step(); s.step(); r.append(o.param_groups[0]['lr'])\nr",
})
# the multi-tensor steps with tensor learning rates, mixed groups, sparse gradients
CASES.update({
 "adam_foreach_tensor_lr": f"p = {P}; L.optim.Adam([p], lr=L.tensor(0.1), foreach=True)",
 "nadam_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                            f"o = L.optim.NAdam([p], lr=L.tensor(0.1), foreach=True); o.step(); [p]",
 "adamax_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                             f"o = L.optim.Adamax([p], lr=L.tensor([0.1]), foreach=True); o.step(); [p]",
 "rmsprop_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                              f"o = L.optim.RMSprop([p], lr=L.tensor(0.1), foreach=True, momentum=0.5); o.step(); "
                              f"[p]",
 "adadelta_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                               f"o = L.optim.Adadelta([p], lr=L.tensor(0.5), foreach=True); o.step(); [p]",
 "adagrad_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                              f"o = L.optim.Adagrad([p], lr=L.tensor(0.5), foreach=True, lr_decay=0.1); o.step(); "
                              f"o.step(); [p]",
 "rprop_foreach_tensor_lr": f"p = {P}; p.grad = L.ones(2, 3); "
                            f"o = L.optim.Rprop([p], lr=L.tensor(0.5), foreach=True); o.step(); [p]",
 "adafactor_foreach_mixed": f"p = {P}; q = L.nn.Parameter(L.ones(4)); "
                            f"r = L.nn.Parameter(L.ones(2, 2, dtype=L.float64)); p.grad = L.ones(2, 3); "
                            f"q.grad = L.linspace(0., 1., 4); r.grad = L.ones(2, 2, dtype=L.float64); "
                            f"o = L.optim.Adafactor([p, q, r], foreach=True); o.step(); o.step(); "
                            f"[p, q, r, o.state[r]['row_var']]",
 "adafactor_foreach_complex": "p = L.nn.Parameter(L.ones(2, dtype=L.complex64)); "
                              "p.grad = L.ones(2, dtype=L.complex64); L.optim.Adafactor([p], foreach=True).step()",
 "foreach_sparse_rmsprop": "p = L.nn.Parameter(L.ones(3)); "
                           "p.grad = L.sparse_coo_tensor(L.tensor([[0]]), L.tensor([1.]), (3,)); "
                           "L.optim.RMSprop([p], foreach=True).step()",
 "foreach_sparse_rprop": "p = L.nn.Parameter(L.ones(3)); "
                         "p.grad = L.sparse_coo_tensor(L.tensor([[0]]), L.tensor([1.]), (3,)); "
                         "L.optim.Rprop([p], foreach=True).step()",
 "foreach_state_dict_to_single": f"p = {P}; p.grad = L.ones(2, 3); o = L.optim.RAdam([p], foreach=True); o.step(); "
                                 f"o2 = L.optim.RAdam([p], foreach=False); o2.load_state_dict(o.state_dict()); "
                                 f"o2.step(); [p, o2.param_groups[0]['foreach'], o2.state[p]['step']]",
})



def _program(code):
    """The program as a function of the library (``helpers.program_of``)."""
    return program_of(code)


@pytest.mark.parametrize("name", CASES)
def test_gives_torchs_result_or_error(name):
    assert_same_result_or_error(_program(CASES[name]))


def test_clip_grad_norm_warns_as_torch_and_still_clips():
    """The old name warns with torch's FutureWarning and message, pointing at the caller."""
    def run(L):
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.full((2,), 3.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.nn.utils.clip_grad_norm(p, 1.0)
        return [(w.category, str(w.message).replace("internals", "torch"), w.filename) for w in caught], p.grad
    (ours, our_grad), (theirs, their_grad) = run(internals), run(torch)
    assert ours == theirs and ours[0][2] == __file__
    assert our_grad.tolist() == their_grad.tolist()
