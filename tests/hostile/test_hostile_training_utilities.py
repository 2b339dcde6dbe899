"""The training stack's utilities given odd arguments: optimizers and schedulers (state dicts,
groups, closures), ``utils.data`` (collate, samplers, loaders, iterable datasets with workers),
save and load (odd objects, ``map_location``, damaged files), ``autograd.functional``,
``func.functional_call`` and ``nn.utils``. Each program runs with ``L`` torch and with ``L``
internals and gives torch's values, dtypes, shapes, strides and nodes, or torch's exception class."""
import collections
import io
import threading
import zipfile

import numpy as np
import pytest
import torch
from helpers import in_threads, program_of
from test_hostile_training_stack import COMPOSITE_ULPS, twin

import internals

P = "L.nn.Parameter(L.linspace(-1., 2., 6).reshape(2, 3))"
Q = "L.nn.Parameter(L.linspace(0.5, 3., 4))"
G = "p.grad = L.linspace(-2., 1., 6).reshape(2, 3)"
F64 = "dtype=L.float64"
Pair = collections.namedtuple("Pair", "a b")


def steps(L, o, params, n=3, closure=False):
    """``n`` steps of ``o`` on fixed gradients; the parameters after each, and the state dict."""
    seen = []
    for k in range(n):
        for p in params:
            p.grad = L.linspace(-1., 1., p.numel(), dtype=p.dtype).reshape(p.shape) * (k + 1)
        loss = o.step((lambda k=k: L.tensor(float(k))) if closure else None)
        seen.append([p.detach().clone() for p in params] + ([loss] if closure else []))
    return seen


def saved(L, obj, **load):
    """``obj`` saved to memory and loaded back with ``load``'s arguments."""
    f = io.BytesIO()
    L.save(obj, f)
    f.seek(0)
    return L.load(f, **load)


def damaged(L, obj, cut):
    """``obj`` saved, its bytes cut by ``cut`` (a slice), loaded back."""
    f = io.BytesIO()
    L.save(obj, f)
    return L.load(io.BytesIO(f.getvalue()[cut]), weights_only=True)


class Numbers:
    def __init__(self, L, n=7):
        self.L, self.n = L, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.L.tensor([i, i * i]), i % 3


class Stream:
    """An iterable dataset that shards itself over the loader's workers."""
    def __init__(self, L, n=9):
        self.L, self.n = L, n

    def __iter__(self):
        info = self.L.utils.data.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(self.L.tensor([k]) for k in range(start, self.n, step))


def iterable(L, n=9):
    class S(Stream, L.utils.data.IterableDataset):
        pass
    return S(L, n)


CASES = {}
# ---------------------------------------------------------------------- optimizers
for name, kw in [("SGD", "lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1"),
                 ("SGD", "lr=0.1, momentum=0.5, dampening=0.5, maximize=True"),
                 ("Adam", "lr=0.01, amsgrad=True, weight_decay=0.1"),
                 ("Adam", "lr=0.01, betas=(0.0, 0.0), eps=0.0"),
                 ("AdamW", "lr=0.01, amsgrad=True, maximize=True"),
                 ("Adamax", "lr=0.1, weight_decay=0.2"),
                 ("NAdam", "lr=0.1, decoupled_weight_decay=True, weight_decay=0.1"),
                 ("RAdam", "lr=0.1, decoupled_weight_decay=True, weight_decay=0.1"),
                 ("RMSprop", "lr=0.01, centered=True, momentum=0.3"),
                 ("Adagrad", "lr=0.1, initial_accumulator_value=0.5, lr_decay=0.01"),
                 ("Adadelta", "lr=1.0, rho=0.5, maximize=True"),
                 ("Rprop", "lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2)"),
                 ("ASGD", "lr=0.1, t0=1, lambd=0.1"),
                 ("Adafactor", "lr=0.1, beta2_decay=-0.5"),
                 ("SGD", "lr=0.1, momentum=0.9, foreach=True"),
                 ("Adam", "lr=0.01, foreach=True, amsgrad=True")]:
    key = f"{name}({kw})"
    CASES[f"round_trip {key}"] = (
        f"p = {P}; q = {Q}; o = L.optim.{name}([p, q], {kw}); a = steps(L, o, [p, q], 2); "
        f"o2 = L.optim.{name}([p, q], {kw}); o2.load_state_dict(o.state_dict()); b = steps(L, o2, [p, q], 2); "
        "[a, b, o2.state_dict()['param_groups']]")
CASES.update({
 "groups_own_lr": f"p = {P}; q = {Q}; o = L.optim.Adam([{{'params': [p]}}, {{'params': [q], 'lr': 0.5, "
                  f"'betas': (0.5, 0.6)}}], lr=0.01); [steps(L, o, [p, q]), o.state_dict()['param_groups']]",
 "group_unknown_key_kept": f"p = {P}; o = L.optim.SGD([{{'params': p, 'colour': 'red'}}], lr=0.1); "
                           "o.param_groups[0]['colour']",
 "group_params_set": f"p = {P}; L.optim.SGD([{{'params': {{p}}}}], lr=0.1)",
 "params_set": f"p = {P}; L.optim.SGD({{p}}, lr=0.1)",
 "params_tensor_not_leaf": f"p = {P}; L.optim.SGD([p * 2], lr=0.1)",
 "params_named": f"p = {P}; q = {Q}; o = L.optim.Adam([('p', p), ('q', q)], lr=0.1); steps(L, o, [p, q], 1); "
                 "[o.state_dict()['param_groups'], sorted(o.state_dict()['state'])]",
 "params_named_mixed": f"p = {P}; q = {Q}; L.optim.Adam([('p', p), q], lr=0.1)",
 "params_empty": "L.optim.SGD([], lr=0.1)",
 "params_empty_group": "L.optim.SGD([{'params': []}], lr=0.1)",
 "lr_negative": f"p = {P}; L.optim.Adam([p], lr=-1.)",
 "betas_bad": f"p = {P}; L.optim.Adam([p], betas=(1.0, 0.9))",
 "eps_negative": f"p = {P}; L.optim.Adam([p], eps=-1e-8)",
 "momentum_negative": f"p = {P}; L.optim.SGD([p], lr=0.1, momentum=-0.1)",
 "nesterov_no_momentum": f"p = {P}; L.optim.SGD([p], lr=0.1, nesterov=True)",
 "rmsprop_alpha_negative": f"p = {P}; L.optim.RMSprop([p], alpha=-0.1)",
 "rho_bad": f"p = {P}; L.optim.Adadelta([p], rho=1.5)",
 "etas_bad": f"p = {P}; L.optim.Rprop([p], etas=(1.2, 0.5))",
 "sgd_lr_default": f"p = {P}; o = L.optim.SGD([p]); {G}; o.step(); [p]",
 "closure_returns_loss": f"p = {P}; o = L.optim.SGD([p], lr=0.1); steps(L, o, [p], 2, closure=True)",
 "closure_with_grad": f"p = {P}\ndef c():\n  o.zero_grad(); l = (p * p).sum(); l.backward(); return l\n"
                      "o = L.optim.Adam([p], lr=0.1); r = [o.step(c) for _ in range(3)]\n[r, p]",
 "lbfgs_strong_wolfe": f"p = {P}\ndef c():\n  o.zero_grad(); l = ((p - 1) ** 4).sum(); l.backward(); return l\n"
                       "o = L.optim.LBFGS([p], lr=1, max_iter=5, line_search_fn='strong_wolfe'); r = o.step(c)\n"
                       "[r, p, o.state_dict()['state'][0]['n_iter']]",
 "lbfgs_bad_line_search": f"p = {P}; L.optim.LBFGS([p], line_search_fn='armijo').step(lambda: (p * p).sum())",
 "lbfgs_no_closure": f"p = {P}; L.optim.LBFGS([p]).step()",
 "lbfgs_two_groups": f"p = {P}; q = {Q}; L.optim.LBFGS([{{'params': [p]}}, {{'params': [q]}}])",
 "zero_grad_keep": f"p = {P}; {G}; o = L.optim.SGD([p], lr=0.1); o.zero_grad(set_to_none=False); [p.grad]",
 "zero_grad_none": f"p = {P}; {G}; o = L.optim.SGD([p], lr=0.1); o.zero_grad(); [p.grad is None]",
 "step_without_grads": f"p = {P}; o = L.optim.Adam([p], lr=0.1); o.step(); [p, len(o.state)]",
 "state_dict_wrong_groups": f"p = {P}; q = {Q}; o = L.optim.SGD([p], lr=0.1); "
                            "L.optim.SGD([{'params': [p]}, {'params': [q]}], lr=0.1).load_state_dict(o.state_dict())",
 "state_dict_wrong_sizes": f"p = {P}; q = {Q}; o = L.optim.SGD([p, q], lr=0.1); "
                           "L.optim.SGD([p], lr=0.1).load_state_dict(o.state_dict())",
 "state_dict_float64_params": "p = L.nn.Parameter(L.ones(3, dtype=L.float64)); o = L.optim.Adam([p], lr=0.1); "
                              "steps(L, o, [p], 1); sd = o.state_dict(); q = L.nn.Parameter(L.ones(3)); "
                              "o2 = L.optim.Adam([q], lr=0.1); o2.load_state_dict(sd); "
                              "[o2.state[q]['exp_avg'].dtype, o2.state[q]['step'].dtype]",
 "state_dict_lr_tensor": f"p = {P}; o = L.optim.Adam([p], lr=L.tensor(0.01)); steps(L, o, [p], 2); "
                         "[o.state_dict()['param_groups'][0]['lr'], p]",
 "add_param_group_dup": f"p = {P}; o = L.optim.SGD([p], lr=0.1); o.add_param_group({{'params': [p]}})",
 "add_param_group_defaults": f"p = {P}; q = {Q}; o = L.optim.Adam([p], lr=0.3, betas=(0.5, 0.7)); "
                             "o.add_param_group({'params': q, 'lr': 0.1}); o.param_groups[1]",
 "add_param_group_not_dict": f"p = {P}; q = {Q}; o = L.optim.SGD([p], lr=0.1); o.add_param_group([q])",
 "optimizer_repr": f"p = {P}; repr(L.optim.AdamW([p], lr=0.1))",
 "sgd_sparse_momentum": "p = L.nn.Parameter(L.ones(3)); "
                        "p.grad = L.sparse_coo_tensor(L.tensor([[0, 2]]), L.tensor([1., 2.]), (3,)); "
                        "o = L.optim.SGD([p], lr=0.1, momentum=0.9); o.step(); o.step(); [p]",
 "adam_capturable_cpu": f"p = {P}; o = L.optim.Adam([p], lr=0.1, capturable=True); [steps(L, o, [p], 2), "
                        "o.state[p]['step']]",
 "adam_fused_cpu": f"p = {P}; o = L.optim.Adam([p], lr=0.1, fused=True); steps(L, o, [p], 2)",
 "adam_fused_foreach": f"p = {P}; L.optim.Adam([p], lr=0.1, fused=True, foreach=True)",
 "sgd_differentiable": f"p = {P}; q = p.clone(); o = L.optim.SGD([q], lr=0.1, momentum=0.5, differentiable=True); "
                       "q.grad = L.ones(2, 3); o.step(); [q, q.grad_fn is None]",
 "averaged_model": "L.manual_seed(0); m = L.nn.Linear(2, 2); a = L.optim.swa_utils.AveragedModel(m); "
                   "a.update_parameters(m)\nwith L.no_grad():\n  m.weight.mul_(3.)\na.update_parameters(m)\n"
                   "[a.n_averaged, a.module.weight]",
 "ema_model": "L.manual_seed(0); m = L.nn.Linear(2, 2); a = L.optim.swa_utils.AveragedModel(m, "
              "multi_avg_fn=L.optim.swa_utils.get_ema_multi_avg_fn(0.9)); a.update_parameters(m)\n"
              "with L.no_grad():\n  m.weight.add_(1.)\na.update_parameters(m)\n[a.n_averaged, a.module.weight]",
 "optimizer_step_hooks": f"p = {P}; o = L.optim.SGD([p], lr=0.1); seen = []; "
                         "o.register_step_pre_hook(lambda opt, a, k: seen.append('pre')); "
                         "o.register_step_post_hook(lambda opt, a, k: seen.append('post')); "
                         f"{G}; o.step(); seen",
 "optimizer_state_dict_hook": f"p = {P}; o = L.optim.SGD([p], lr=0.1); "
                              "o.register_state_dict_post_hook(lambda opt, sd: {**sd, 'extra': 1}); "
                              "sorted(o.state_dict())",
 "load_state_dict_keeps_lr_tensor": f"p = {P}; o = L.optim.Adam([p], lr=L.tensor(0.1)); sd = o.state_dict(); "
                                    "o2 = L.optim.Adam([p], lr=0.5); o2.load_state_dict(sd); "
                                    "[type(o2.param_groups[0]['lr']).__name__, o2.param_groups[0]['lr']]",
 "complex_param_adam": "p = L.nn.Parameter(L.tensor([1+1j, 2-1j])); o = L.optim.Adam([p], lr=0.1); "
                       "p.grad = L.tensor([0.5-1j, 1+2j]); o.step(); o.step(); [p]",
 "int_param": "p = L.ones(3, dtype=L.long); L.optim.SGD([p], lr=0.1)",
 "float16_param_sgd": "p = L.nn.Parameter(L.ones(3, dtype=L.float16)); o = L.optim.SGD([p], lr=0.1, momentum=0.5); "
                      "p.grad = L.full((3,), 0.3, dtype=L.float16); o.step(); o.step(); [p]",
})
# ---------------------------------------------------------------------- schedulers
S = f"p = {P}; o = L.optim.SGD([p], lr=1.0, momentum=0.9)"


def sched(body, n=6, metric=None):
    arg = f"{metric}[_]" if metric else ""
    return (f"{S}; s = {body}; r = []\nfor _ in range({n}):\n  o.step(); s.step({arg}); "
            "r.append([o.param_groups[0]['lr'], s.get_last_lr() if hasattr(s, 'get_last_lr') else None])\n"
            "sd = s.state_dict(); sd.pop('lr_lambdas', None); sd.pop('_scale_fn_ref', None); "
            "sd.pop('_schedulers', None)\n[r, sorted(sd)]")


CASES.update({
 "onecycle_cos": sched("L.optim.lr_scheduler.OneCycleLR(o, max_lr=2.0, total_steps=6)", 6),
 "onecycle_linear_three": sched("L.optim.lr_scheduler.OneCycleLR(o, max_lr=[2.0], epochs=2, steps_per_epoch=3, "
                                "anneal_strategy='linear', three_phase=True)", 6),
 "onecycle_overrun": sched("L.optim.lr_scheduler.OneCycleLR(o, max_lr=2.0, total_steps=3)", 5),
 "onecycle_no_steps": "p = L.nn.Parameter(L.ones(1)); o = L.optim.SGD([p], lr=1.); "
                      "L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.)",
 "onecycle_bad_anneal": f"{S}; L.optim.lr_scheduler.OneCycleLR(o, 1., total_steps=4, anneal_strategy='step')",
 "cyclic_triangular2": sched("L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode='triangular2')", 9),
 "cyclic_exp_range": sched("L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, step_size_up=1, step_size_down=3, "
                           "mode='exp_range', gamma=0.9)", 9),
 "cyclic_bad_mode": f"{S}; L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode='square')",
 "cyclic_no_momentum": "p = L.nn.Parameter(L.ones(1)); o = L.optim.Adagrad([p]); "
                       "L.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0)",
 "warm_restarts_mult": sched("L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.1)", 9),
 "warm_restarts_bad": f"{S}; L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0)",
 "warm_restarts_float_mult": f"{S}; L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5)",
 "plateau_max_rel": sched("L.optim.lr_scheduler.ReduceLROnPlateau(o, mode='max', patience=1, cooldown=1, "
                          "threshold=0.1)", 8, "[1., 1., 1.05, 1.3, 1.3, 1.3, 1.3, 1.3]"),
 "plateau_abs_min_lr": sched("L.optim.lr_scheduler.ReduceLROnPlateau(o, patience=0, factor=0.1, "
                             "threshold_mode='abs', min_lr=0.05)", 6, "[3., 3., 3., 2.5, 2.5, 2.5]"),
 "plateau_bad_factor": f"{S}; L.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0)",
 "plateau_bad_mode": f"{S}; L.optim.lr_scheduler.ReduceLROnPlateau(o, mode='up')",
 "plateau_tensor_metric": sched("L.optim.lr_scheduler.ReduceLROnPlateau(o, patience=0)", 4,
                                "[L.tensor(2.), L.tensor(2.), L.tensor(1.), L.tensor(1.)]"),
 "polynomial": sched("L.optim.lr_scheduler.PolynomialLR(o, total_iters=4, power=2.)", 6),
 "linear_start_zero": f"{S}; L.optim.lr_scheduler.LinearLR(o, start_factor=0.)",
 "linear_end_above": f"{S}; L.optim.lr_scheduler.LinearLR(o, end_factor=1.5)",
 "linear": sched("L.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=3)", 5),
 "constant": sched("L.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2)", 4),
 "constant_bad": f"{S}; L.optim.lr_scheduler.ConstantLR(o, factor=2.)",
 "multiplicative": sched("L.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9)", 4),
 "lambda_list": "p = L.nn.Parameter(L.ones(1)); q = L.nn.Parameter(L.ones(1)); "
                "o = L.optim.SGD([{'params': [p]}, {'params': [q], 'lr': 2.}], lr=1.); "
                "s = L.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.5 ** e, lambda e: 1 + e]); o.step(); s.step(); "
                "o.step(); s.step(); s.get_last_lr()",
 "lambda_wrong_count": f"{S}; L.optim.lr_scheduler.LambdaLR(o, [lambda e: 1., lambda e: 2.])",
 "step_lr_last_epoch": f"{S}; L.optim.lr_scheduler.StepLR(o, 2, last_epoch=3)",
 "exponential_state_round_trip": f"{S}; s = L.optim.lr_scheduler.ExponentialLR(o, 0.5); o.step(); s.step(); "
                                 "s2 = L.optim.lr_scheduler.ExponentialLR(o, 0.9); s2.load_state_dict(s.state_dict()); "
                                 "o.step(); s2.step(); [s2.get_last_lr(), s2.gamma, s2.last_epoch]",
 "sequential_bad_milestones": f"{S}; a = L.optim.lr_scheduler.ConstantLR(o); "
                              "b = L.optim.lr_scheduler.ExponentialLR(o, 0.5); "
                              "L.optim.lr_scheduler.SequentialLR(o, [a, b], milestones=[1, 2])",
 "sequential_other_optimizer": f"{S}; o2 = L.optim.SGD([{P}], lr=1.); a = L.optim.lr_scheduler.ConstantLR(o); "
                               "b = L.optim.lr_scheduler.ExponentialLR(o2, 0.5); "
                               "L.optim.lr_scheduler.SequentialLR(o, [a, b], milestones=[1])",
 "chained": sched("L.optim.lr_scheduler.ChainedScheduler([L.optim.lr_scheduler.ExponentialLR(o, 0.9), "
                  "L.optim.lr_scheduler.StepLR(o, 2, 0.5)])", 5),
 "cosine_eta_above": sched("L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3, eta_min=2.0)", 7),
 "cosine_tmax_zero": sched("L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=0)", 2),
 "swa_lr": sched("L.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=3, anneal_strategy='linear')", 5),
 "swa_lr_bad": f"{S}; L.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=-1)",
})
# ---------------------------------------------------------------------- utils.data
D = "L.utils.data"
CASES.update({
 "collate_namedtuple": f"r = {D}.default_collate([Pair(L.ones(2), 1), Pair(L.zeros(2), 2)]); [type(r).__name__, "
                       "r.a, r.b]",
 "collate_ordered_dict": f"r = {D}.default_collate([collections.OrderedDict(b=1, a=L.ones(1)), "
                         "collections.OrderedDict(b=2, a=L.zeros(1))]); [type(r).__name__, list(r), r['a'], r['b']]",
 "collate_strings": f"{D}.default_collate(['ab', 'c'])",
 "collate_bytes": f"{D}.default_collate([b'ab', b'c'])",
 "collate_floats": f"{D}.default_collate([1.5, 2])",
 "collate_ints_bools": f"{D}.default_collate([1, True])",
 "collate_complex": f"{D}.default_collate([1+2j, 3j])",
 "collate_mixed_keys": f"{D}.default_collate([{{'a': 1}}, {{'b': 2}}])",
 "collate_nested_lists": f"{D}.default_collate([[[1, 2], [3.]], [[4, 5], [6.]]])",
 "collate_ragged_lists": f"{D}.default_collate([[1, 2], [3]])",
 "collate_dtype_mix": f"{D}.default_collate([L.ones(2, dtype=L.int32), L.ones(2, dtype=L.float16)])",
 "collate_scalar_tensors": f"{D}.default_collate([L.tensor(1.), L.tensor(2.)])",
 "collate_empty_tensors": f"{D}.default_collate([L.ones(0, 3), L.ones(0, 3)])",
 "collate_numpy_scalar_mix": f"{D}.default_collate([np.int32(1), np.int32(4)])",
 "collate_numpy_bool": f"{D}.default_collate([np.array([True]), np.array([False])])",
 "collate_numpy_object": f"{D}.default_collate([np.array([object()])])",
 "collate_sets": f"{D}.default_collate([{{1}}, {{2}}])",
 "collate_object": f"{D}.default_collate([object()])",
 "collate_tuple_of_dicts": f"{D}.default_collate([({{'x': L.ones(1)}}, 1), ({{'x': L.zeros(1)}}, 2)])",
 "convert_namedtuple": f"r = {D}.default_convert(Pair(np.array([1.]), 2)); [type(r).__name__, r.a, r.b]",
 "convert_numpy_str": f"r = {D}.default_convert(np.array(['a', 'b'])); [type(r).__name__, r.tolist()]",
 "convert_dict_numpy": f"{D}.default_convert({{'a': np.arange(3)}})",
 "sequential_sampler": f"list({D}.SequentialSampler(range(4)))",
 "random_sampler_empty": f"{D}.RandomSampler([])",
 "random_sampler_replacement_gen": f"list({D}.RandomSampler(range(5), replacement=True, num_samples=40, "
                                   "generator=L.Generator().manual_seed(3)))",
 "random_sampler_long": f"list({D}.RandomSampler(range(3), num_samples=7, generator=L.Generator().manual_seed(1)))",
 "random_sampler_global_seed": f"L.manual_seed(4); list({D}.RandomSampler(range(6)))",
 "weighted_tensor_weights": f"list({D}.WeightedRandomSampler(L.tensor([0., 1., 3.]), 5, "
                            "generator=L.Generator().manual_seed(0)))",
 "weighted_all_zero": f"list({D}.WeightedRandomSampler([0., 0.], 2))",
 "weighted_negative": f"list({D}.WeightedRandomSampler([1., -1.], 2))",
 "weighted_too_many_no_replacement": f"list({D}.WeightedRandomSampler([1., 1.], 3, replacement=False))",
 "weighted_num_samples_bool": f"{D}.WeightedRandomSampler([1., 1.], True)",
 "subset_random_gen": f"list({D}.SubsetRandomSampler([5, 1, 9, 3], generator=L.Generator().manual_seed(9)))",
 "subset_random_len": f"len({D}.SubsetRandomSampler(range(2, 9)))",
 "batch_sampler_generator_source": f"list({D}.BatchSampler(iter(range(5)), 2, False))",
 "batch_sampler_len_no_drop": f"len({D}.BatchSampler(range(7), 3, drop_last=False))",
 "batch_sampler_float_size": f"{D}.BatchSampler(range(7), 2.0, False)",
 "batch_sampler_bool_size": f"{D}.BatchSampler(range(7), True, False)",
 "distributed_sampler": f"s = {D}.DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False); [list(s), "
                        "len(s)]",
 "distributed_sampler_drop": f"s = {D}.DistributedSampler(range(10), num_replicas=3, rank=2, shuffle=True, "
                             "seed=5, drop_last=True); s.set_epoch(1); [list(s), len(s)]",
 "distributed_sampler_bad_rank": f"{D}.DistributedSampler(range(10), num_replicas=3, rank=3)",
 "random_split_zero_part": f"[list(s) for s in {D}.random_split(range(5), [0, 5], "
                           "generator=L.Generator().manual_seed(0))]",
 "random_split_fraction_rounding": f"[list(s) for s in {D}.random_split(range(7), [0.33, 0.33, 0.34], "
                                   "generator=L.Generator().manual_seed(1))]",
 "random_split_negative": f"{D}.random_split(range(5), [-1, 6])",
 "random_split_too_long": f"{D}.random_split(range(5), [3, 3])",
 "concat_len_iterable": f"{D}.ConcatDataset([range(3), iterable(L)])",
 "chain_dataset": f"list({D}.ChainDataset([iterable(L, 2), iterable(L, 3)]))",
 "iterable_without_iter": "class S(L.utils.data.IterableDataset):\n  pass\nS()",
 "dataset_generic": "[L.utils.data.Dataset[int].__origin__.__name__, L.utils.data.Sampler[int].__origin__.__name__, "
                    "L.utils.data.DataLoader[int].__origin__.__name__, "
                    "L.utils.data.IterableDataset[str].__args__ == (str,)]",
 "unpad_sequence_lengths_short": "list(L.nn.utils.rnn.unpad_sequence(L.arange(12.).reshape(4, 3), L.tensor([3, 1])))",
 "chain_dataset_len": f"len({D}.ChainDataset([iterable(L, 2)]))",
 "stack_dataset": f"s = {D}.StackDataset(range(3), L.arange(3.)); [len(s), s[1]]",
 "stack_dataset_kw": f"s = {D}.StackDataset(a=range(3), b='xyz'); [len(s), s[2]]",
 "stack_dataset_mismatch": f"{D}.StackDataset(range(3), range(4))",
 "stack_dataset_both": f"{D}.StackDataset(range(3), b=range(3))",
 "tensor_dataset_index": f"{D}.TensorDataset(L.arange(6.).reshape(3, 2), L.tensor([1, 2, 3]))[-1]",
 "tensor_dataset_slice": f"{D}.TensorDataset(L.arange(6.).reshape(3, 2))[1:]",
 "subset_getitems": f"{D}.Subset(Numbers(L), [4, 0, 6])[[0, 2]]",
 "dataset_add": f"d = Numbers(L) if False else {D}.TensorDataset(L.arange(3.)); e = d + d; [type(e).__name__, len(e)]",
 "loader_batch_none_len": f"l = {D}.DataLoader(Numbers(L), batch_size=None); [len(l), list(l)[2]]",
 "loader_namedtuple_batches": f"l = {D}.DataLoader([Pair(L.tensor(k), k) for k in range(5)], batch_size=2); "
                              "[[type(b).__name__, b.a, b.b] for b in l]",
 "loader_dict_batches": f"l = {D}.DataLoader([{{'x': k, 'y': [k, 'a']}} for k in range(3)], batch_size=2); list(l)",
 "loader_iterable_batches": f"list({D}.DataLoader(iterable(L, 5), batch_size=2))",
 "loader_iterable_drop_last": f"l = {D}.DataLoader(iterable(L, 5), batch_size=2, drop_last=True); list(l)",
 "loader_iterable_shuffle": f"{D}.DataLoader(iterable(L, 5), shuffle=True)",
 "loader_iterable_sampler": f"{D}.DataLoader(iterable(L, 5), sampler=[0, 1])",
 "loader_iterable_batch_sampler": f"{D}.DataLoader(iterable(L, 5), batch_sampler=[[0, 1]])",
 "loader_iterable_len": f"len({D}.DataLoader(iterable(L, 5)))",
 "loader_iterable_workers": f"sorted(int(b) for b in {D}.DataLoader(iterable(L, 9), num_workers=2, batch_size=None))",
 "loader_iterable_workers_batched": f"sorted(b.tolist() for b in {D}.DataLoader(iterable(L, 9), num_workers=2, "
                                    "batch_size=2))",
 "loader_workers_order": f"l = {D}.DataLoader(Numbers(L), batch_size=2, num_workers=2); [list(l), list(l)]",
 "loader_workers_in_order_false": f"l = {D}.DataLoader(Numbers(L), batch_size=2, num_workers=2, in_order=False); "
                                  "sorted(b[1].tolist() for b in l)",
 "loader_persistent": f"l = {D}.DataLoader(Numbers(L), batch_size=3, num_workers=1, persistent_workers=True); "
                      "[list(l), list(l)]",
 "loader_prefetch_zero": f"{D}.DataLoader(Numbers(L), num_workers=1, prefetch_factor=0)",
 "loader_bad_collate": f"list({D}.DataLoader(Numbers(L), batch_size=2, collate_fn=7))",
 "loader_sampler_shuffle_false": f"list({D}.DataLoader(Numbers(L), sampler=[2, 0], shuffle=False))",
 "loader_string_dataset": f"list({D}.DataLoader('abcde', batch_size=2))",
 "loader_pin_memory": f"[b for b in {D}.DataLoader(Numbers(L), batch_size=4, pin_memory=False)]",
 "loader_batch_size_float": f"{D}.DataLoader(Numbers(L), batch_size=2.5)",
 "loader_len_drop_last": f"len({D}.DataLoader(Numbers(L), batch_size=3, drop_last=True))",
 "loader_multiprocessing_context_bad": f"{D}.DataLoader(Numbers(L), num_workers=1, multiprocessing_context='nope')",
 "loader_generator_shuffle": f"l = {D}.DataLoader(Numbers(L), batch_size=3, shuffle=True, "
                             "generator=L.Generator().manual_seed(11)); [list(l), list(l)]",
 "loader_index_error_dataset": f"list({D}.DataLoader([L.ones(1)], batch_size=1, sampler=[0, 3]))",
 "worker_info_main": f"{D}.get_worker_info()",
})
# ---------------------------------------------------------------------- save / load
CASES.update({
 "save_set": "saved(L, {1, 2, 'a'})",
 "save_set_weights_only": "saved(L, {1, 2}, weights_only=True)",
 "save_complex_number": "saved(L, [1+2j], weights_only=True)",
 "save_slice": "saved(L, slice(1, 5, 2), weights_only=True)",
 "save_bytes": "saved(L, {'b': b'\\x00\\xff', 'ba': bytearray(b'ab')}, weights_only=True)",
 "save_ordered_dict": "r = saved(L, collections.OrderedDict(z=L.ones(2), a=1), weights_only=True); "
                      "[type(r).__name__, list(r)]",
 "save_namedtuple_weights_only": "saved(L, Pair(1, 2), weights_only=True)",
 "save_namedtuple": "r = saved(L, Pair(L.ones(1), 2), weights_only=False); [type(r).__name__, r.a]",
 "save_dtype_device": "saved(L, [L.float16, L.device('cpu'), L.Size([2, 3])], weights_only=True)",
 "save_nested_views": "a = L.arange(10.); r = saved(L, {'v': a[2:5], 'w': a.view(2, 5).t(), 'a': a}); "
                      "r['a'][3] = -1; [r['v'], r['w'], r['v'].storage_offset(), r['w'].stride()]",
 "save_int_dtypes": "saved(L, [L.ones(3, dtype=d) for d in (L.int8, L.uint8, L.int16, L.bool, L.bfloat16)], "
                    "weights_only=True)",
 "save_complex_tensor": "saved(L, L.tensor([1+2j, -1j], dtype=L.complex64), weights_only=True)",
 "save_requires_grad": "r = saved(L, L.ones(2, requires_grad=True)); [r.requires_grad, r.grad_fn is None]",
 "save_parameter": "r = saved(L, L.nn.Parameter(L.ones(2)), weights_only=True); [type(r).__name__, r.requires_grad]",
 "save_non_leaf": "x = L.ones(2, requires_grad=True); r = saved(L, x * 2); [r, r.requires_grad]",
 "save_module_state_dict": "m = L.nn.BatchNorm1d(3); r = saved(L, m.state_dict(), weights_only=True); "
                           "[list(r), r['num_batches_tracked'], type(r).__name__]",
 "save_lambda": "saved(L, lambda: 1)",
 "save_empty_tensor": "saved(L, L.empty(0, 3, dtype=L.float64), weights_only=True)",
 "save_scalar_tensor": "saved(L, L.tensor(5, dtype=L.int16), weights_only=True)",
 "save_expanded": "r = saved(L, L.ones(3).expand(4, 3), weights_only=True); [r, r.stride()]",
 "load_map_location_str": "saved(L, L.ones(2), map_location='cpu', weights_only=True)",
 "load_map_location_device": "saved(L, L.ones(2), map_location=L.device('cpu'), weights_only=True)",
 "load_map_location_dict": "saved(L, L.ones(2), map_location={'cpu': 'cpu'}, weights_only=True)",
 "load_map_location_callable": "saved(L, [L.ones(2)], map_location=lambda s, loc: s, weights_only=True)",
 "load_map_location_bad": "saved(L, L.ones(2), map_location='nowhere', weights_only=True)",
 "load_map_location_int": "saved(L, L.ones(2), map_location=3.5, weights_only=True)",
 "load_mmap_bytesio": "saved(L, L.ones(2), mmap=True)",
 "load_empty_file": "L.load(io.BytesIO(b''), weights_only=True)",
 "load_garbage": "L.load(io.BytesIO(b'not a checkpoint at all'), weights_only=True)",
 "load_truncated_half": "damaged(L, {'w': L.ones(50)}, slice(0, 300))",
 "load_truncated_tail": "damaged(L, {'w': L.ones(50)}, slice(0, -30))",
 "load_memo_never_stored": "f = io.BytesIO(); z = zipfile.ZipFile(f, 'w'); "
                           "z.writestr('archive/data.pkl', b'\\x80\\x02h\\x41.'); z.writestr('archive/byteorder', "
                           "b'little'); z.writestr('archive/version', b'3\\n'); z.close(); f.seek(0); "
                           "L.load(f, weights_only=True)",
 "save_entry_dates": "f = io.BytesIO(); L.save({'w': L.ones(3)}, f); "
                     "[(i.filename, i.date_time) for i in zipfile.ZipFile(f).infolist()][:-1]",
 "load_pickle_protocol_2": "f = io.BytesIO(); L.save([L.arange(3)], f, pickle_protocol=2); f.seek(0); "
                           "L.load(f, weights_only=True)",
 "load_legacy_format": "f = io.BytesIO(); L.save({'a': L.arange(3.)}, f, _use_new_zipfile_serialization=False); "
                       "f.seek(0); L.load(f, weights_only=True)",
 "load_unsafe_class": "saved(L, Numbers(None, 3), weights_only=True)",
 "load_unsafe_global_allowed": "L.serialization.add_safe_globals([Pair]); r = saved(L, Pair(1, 2), weights_only=True); "
                               "L.serialization.clear_safe_globals(); [type(r).__name__, r.a]",
 "save_to_closed_file": "f = io.BytesIO(); f.close(); L.save(L.ones(1), f)",
 "load_not_file": "L.load(12345)",
})
# ---------------------------------------------------------------------- autograd.functional
AF = "L.autograd.functional"
XF = f"L.linspace(-1., 1., 3, {F64})"
YF = f"L.linspace(0.5, 2., 2, {F64})"
CASES.update({
 "jacobian_tuple": f"{AF}.jacobian(lambda a, b: (a * b.sum(), (a ** 2).sum() * b), ({XF}, {YF}))",
 "jacobian_create_graph": f"x = {XF}.requires_grad_(); j = {AF}.jacobian(lambda a: a.exp() * a.sum(), x, "
                          "create_graph=True); [j, L.autograd.grad(j.sum(), x)[0]]",
 "jacobian_strict_independent": f"{AF}.jacobian(lambda a: L.ones(2, {F64}), {XF}, strict=True)",
 "jacobian_independent": f"{AF}.jacobian(lambda a: L.ones(2, {F64}), {XF})",
 "jacobian_strict_vectorize": f"{AF}.jacobian(lambda a: a * 2, {XF}, strict=True, vectorize=True)",
 "jacobian_forward_no_vectorize": f"{AF}.jacobian(lambda a: a, {XF}, strategy='forward-mode')",
 "jacobian_bad_strategy": f"{AF}.jacobian(lambda a: a, {XF}, strategy='sideways')",
 "jacobian_non_tensor_output": f"{AF}.jacobian(lambda a: 3.0, {XF})",
 "jacobian_non_tensor_input": f"{AF}.jacobian(lambda a: a, 3.0)",
 "jacobian_scalar": f"{AF}.jacobian(lambda a: (a * a).sum(), L.tensor(2., {F64}))",
 "jacobian_empty": f"{AF}.jacobian(lambda a: a * 2, L.ones(0, {F64}))",
 "jacobian_int_input": f"{AF}.jacobian(lambda a: a * 2, L.arange(3))",
 "hessian_tuple": f"{AF}.hessian(lambda a, b: (a.exp() * b.sum()).sum(), ({XF}, {YF}))",
 "hessian_create_graph": f"x = {XF}.requires_grad_(); h = {AF}.hessian(lambda a: (a ** 4).sum(), x, "
                         "create_graph=True); [h, L.autograd.grad(h.sum(), x)[0]]",
 "hessian_non_scalar": f"{AF}.hessian(lambda a: a ** 2, {XF})",
 "hessian_linear_strict": f"{AF}.hessian(lambda a: a.sum(), {XF}, strict=True)",
 "hessian_linear": f"{AF}.hessian(lambda a: a.sum(), {XF})",
 "hessian_outer_jacobian_reverse": f"{AF}.hessian(lambda a: (a ** 3).sum(), {XF}, "
                                   "outer_jacobian_strategy='forward-mode')",
 "vjp_default_v_scalar": f"{AF}.vjp(lambda a: (a * a).sum(), {XF})",
 "vjp_nonscalar_no_v": f"{AF}.vjp(lambda a: a * a, {XF})",
 "vjp_wrong_v_shape": f"{AF}.vjp(lambda a: a * a, {XF}, L.ones(2, {F64}))",
 "vjp_tuple": f"{AF}.vjp(lambda a, b: (a * 2, b.sum()), ({XF}, {YF}), (L.ones(3, {F64}), L.tensor(3., {F64})))",
 "vjp_strict": f"{AF}.vjp(lambda a: L.zeros(3, {F64}), {XF}, L.ones(3, {F64}), strict=True)",
 "jvp": f"{AF}.jvp(lambda a: a.exp(), {XF}, L.ones(3, {F64}))",
 "jvp_create_graph": f"x = {XF}.requires_grad_(); o, t = {AF}.jvp(lambda a: a ** 3, x, L.ones(3, {F64}), "
                     "create_graph=True); [o, t, L.autograd.grad(t.sum(), x)[0]]",
 "jvp_no_v_vector": f"{AF}.jvp(lambda a: a, {XF})",
 "jvp_strict_independent": f"{AF}.jvp(lambda a: L.ones(3, {F64}), {XF}, L.ones(3, {F64}), strict=True)",
 "hvp": f"{AF}.hvp(lambda a: (a ** 3).sum(), {XF}, L.ones(3, {F64}))",
 "hvp_tuple": f"{AF}.hvp(lambda a, b: (a.exp() * b.sum()).sum(), ({XF}, {YF}), (L.ones(3, {F64}), L.ones(2, {F64})))",
 "hvp_strict_linear": f"{AF}.hvp(lambda a: a.sum(), {XF}, L.ones(3, {F64}), strict=True)",
 "hvp_create_graph": f"x = {XF}.requires_grad_(); o, h = {AF}.hvp(lambda a: (a ** 4).sum(), x, L.ones(3, {F64}), "
                     "create_graph=True); [o, h, L.autograd.grad(h.sum(), x)[0]]",
 "vhp_non_scalar": f"{AF}.vhp(lambda a: a ** 2, {XF}, L.ones(3, {F64}))",
 "vhp_v_missing": f"{AF}.vhp(lambda a: (a ** 2).sum(), {XF})",
 "vhp_scalar_input": f"{AF}.vhp(lambda a: a ** 3, L.tensor(2., {F64}))",
})
# ---------------------------------------------------------------------- func.functional_call
M = "L.manual_seed(0); m = L.nn.Linear(3, 2).double()"
XM = f"L.linspace(-1., 1., 6, {F64}).reshape(2, 3)"
W2 = f"L.linspace(0., 1., 6, {F64}).reshape(2, 3)"
CASES.update({
 "fc_basic": f"{M}; L.func.functional_call(m, {{'weight': {W2}}}, ({XM},))",
 "fc_grad": f"{M}; w = {W2}.requires_grad_(); y = L.func.functional_call(m, {{'weight': w}}, {XM}); "
            "[y, L.autograd.grad(y.sum(), w)[0], m.weight.grad]",
 "fc_strict_missing": f"{M}; L.func.functional_call(m, {{'weight': {W2}}}, ({XM},), strict=True)",
 "fc_unexpected_key": f"{M}; L.func.functional_call(m, {{'nope': {W2}}}, ({XM},))",
 "fc_unexpected_key_strict": f"{M}; L.func.functional_call(m, {{'nope': {W2}}}, ({XM},), strict=True)",
 "fc_kwargs": f"{M}; L.func.functional_call(m, {{}}, (), {{'input': {XM}}})",
 "fc_dict_tuple": f"{M}; L.func.functional_call(m, ({{'weight': {W2}}}, {{'bias': L.ones(2, {F64})}}), {XM})",
 "fc_dict_tuple_overlap": f"{M}; L.func.functional_call(m, ({{'weight': {W2}}}, {{'weight': {W2}}}), {XM})",
 "fc_restores": f"{M}; w0 = m.weight.clone(); L.func.functional_call(m, {{'weight': {W2}}}, {XM}); "
                "[L.equal(m.weight, w0), type(m.weight).__name__]",
 "fc_restores_on_error": f"{M}; w0 = m.weight.clone()\ntry:\n  L.func.functional_call(m, {{'weight': {W2}}}, "
                         f"L.ones(2, 4, {F64}))\nexcept RuntimeError:\n  pass\n[L.equal(m.weight, w0)]",
 "fc_buffer": "m = L.nn.BatchNorm1d(3).double().eval(); "
              f"L.func.functional_call(m, {{'running_mean': L.ones(3, {F64})}}, {XM})",
 "fc_buffer_train_updates_given": f"m = L.nn.BatchNorm1d(3).double(); rm = L.zeros(3, {F64}); "
                                  f"L.func.functional_call(m, {{'running_mean': rm}}, {XM}); [rm, m.running_mean]",
 "fc_tied": "L.manual_seed(0); m = L.nn.Sequential(L.nn.Linear(2, 2, bias=False), L.nn.Linear(2, 2, bias=False))."
            f"double(); m[1].weight = m[0].weight; w = L.eye(2, {F64}) * 2; "
            f"L.func.functional_call(m, {{'0.weight': w}}, L.ones(1, 2, {F64}))",
 "fc_tied_untied": "L.manual_seed(0); m = L.nn.Sequential(L.nn.Linear(2, 2, bias=False), L.nn.Linear(2, 2, "
                   "bias=False))."
                   f"double(); m[1].weight = m[0].weight; w = L.eye(2, {F64}) * 2; "
                   f"L.func.functional_call(m, {{'0.weight': w}}, L.ones(1, 2, {F64}), tie_weights=False)",
 "fc_tied_conflict": "L.manual_seed(0); m = L.nn.Sequential(L.nn.Linear(2, 2, bias=False), L.nn.Linear(2, 2, "
                     "bias=False))."
                     f"double(); m[1].weight = m[0].weight; w = L.eye(2, {F64}); "
                     f"L.func.functional_call(m, {{'0.weight': w, '1.weight': w * 3}}, L.ones(1, 2, {F64}))",
 "fc_tied_strict": "L.manual_seed(0); m = L.nn.Sequential(L.nn.Linear(2, 2, bias=False), L.nn.Linear(2, 2, "
                   "bias=False))."
                   f"double(); m[1].weight = m[0].weight; "
                   f"L.func.functional_call(m, {{'0.weight': L.eye(2, {F64})}}, L.ones(1, 2, {F64}), strict=True)",
 "fc_non_tensor_value": f"{M}; L.func.functional_call(m, {{'weight': 3.0}}, {XM})",
 "fc_args_not_tuple": f"{M}; L.func.functional_call(m, {{}}, [{XM}])",
 "stateless_functional_call": f"{M}; L.nn.utils.stateless.functional_call(m, {{'bias': L.zeros(2, {F64})}}, {XM})",
})
# ---------------------------------------------------------------------- nn.utils
PS = "L.nn.Parameter(L.linspace(-1., 2., 6).reshape(2, 3))"
CASES.update({
 "clip_inf_grad_l2": f"p = {PS}; p.grad = L.tensor([[float('inf'), 1., 2.], [0., 0., 0.]]); "
                     "n = L.nn.utils.clip_grad_norm_(p, 1.0); [n, p.grad]",
 "clip_inf_grad_foreach": f"p = {PS}; q = L.nn.Parameter(L.ones(2)); p.grad = L.tensor([[float('inf'), 1., 2.], "
                          "[0., 0., 0.]]); q.grad = L.ones(2); n = L.nn.utils.clip_grad_norm_([p, q], 1.0, "
                          "foreach=True); [n, p.grad, q.grad]",
 "clip_nan_foreach_error": f"p = {PS}; p.grad = L.full((2, 3), float('nan')); "
                           "L.nn.utils.clip_grad_norm_(p, 1.0, foreach=True, error_if_nonfinite=True)",
 "clip_nan_norm_inf": f"p = {PS}; p.grad = L.tensor([[float('nan'), 1., 2.], [0., 0., 0.]]); "
                      "n = L.nn.utils.clip_grad_norm_(p, 1.0, norm_type=float('inf')); [n, p.grad]",
 "clip_neg_inf_norm": f"p = {PS}; p.grad = L.tensor([[-3., 1., 2.], [0.5, 0., 0.]]); "
                      "n = L.nn.utils.clip_grad_norm_(p, 1.0, norm_type=-float('inf')); [n, p.grad]",
 "clip_norm_3": f"p = {PS}; q = L.nn.Parameter(L.ones(2, {F64})); p.grad = L.ones(2, 3); q.grad = L.ones(2, {F64}); "
                "n = L.nn.utils.clip_grad_norm_([p, q], 0.5, norm_type=1.); [n, p.grad, q.grad]",
 "clip_fp16": "p = L.nn.Parameter(L.ones(4, dtype=L.float16)); p.grad = L.full((4,), 300., dtype=L.float16); "
              "n = L.nn.utils.clip_grad_norm_(p, 1.0); [n, p.grad]",
 "clip_foreach_fp16_mix": "p = L.nn.Parameter(L.ones(4, dtype=L.float16)); q = L.nn.Parameter(L.ones(2)); "
                          "p.grad = L.full((4,), 3., dtype=L.float16); q.grad = L.full((2,), 4.); "
                          "n = L.nn.utils.clip_grad_norm_([p, q], 1.0, foreach=True); [n, p.grad, q.grad]",
 "clip_grads_with_norm_foreach": f"p = {PS}; p.grad = L.ones(2, 3); "
                                 "L.nn.utils.clip_grads_with_norm_([p], 1.0, L.tensor(0.5), foreach=True); [p.grad]",
 "clip_value_nan": f"p = {PS}; p.grad = L.tensor([[float('nan'), 5., -5.], [0., 0., 0.]]); "
                   "L.nn.utils.clip_grad_value_(p, 1.); [p.grad]",
 "weight_norm_dim_none": "L.manual_seed(0); m = L.nn.utils.weight_norm(L.nn.Linear(3, 2).double(), dim=None); "
                         "[sorted(n for n, _ in m.named_parameters()), m.weight_g, m(L.ones(1, 3, dtype=L.float64))]",
 "weight_norm_dim1": "L.manual_seed(0); m = L.nn.utils.weight_norm(L.nn.Linear(3, 2).double(), dim=1); "
                     "y = m(L.ones(1, 3, dtype=L.float64)); y.sum().backward(); [m.weight_g, m.weight_v.grad, "
                     "m.weight_g.grad]",
 "weight_norm_twice": "m = L.nn.utils.weight_norm(L.nn.Linear(3, 2)); L.nn.utils.weight_norm(m)",
 "weight_norm_remove": "L.manual_seed(0); m = L.nn.utils.weight_norm(L.nn.Linear(3, 2).double()); "
                       "L.nn.utils.remove_weight_norm(m); [sorted(n for n, _ in m.named_parameters()), m.weight]",
 "weight_norm_remove_missing": "L.nn.utils.remove_weight_norm(L.nn.Linear(3, 2))",
 "weight_norm_param_missing": "L.nn.utils.weight_norm(L.nn.Linear(3, 2), name='nope')",
 "p_weight_norm": "L.manual_seed(0); m = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(3, 2).double()); "
                  "y = m(L.ones(1, 3, dtype=L.float64)); y.sum().backward(); "
                  "[m.parametrizations.weight.original0, m.parametrizations.weight.original1.grad, m.weight]",
 "spectral_norm": "L.manual_seed(0); m = L.nn.utils.spectral_norm(L.nn.Linear(4, 3).double(), n_power_iterations=3); "
                  "y = m(L.ones(2, 4, dtype=L.float64)); [y, m.weight_u, m.weight_v, m.weight]",
 "spectral_norm_eval": "L.manual_seed(0); m = L.nn.utils.spectral_norm(L.nn.Linear(4, 3).double()); m(L.ones(1, 4, "
                       "dtype=L.float64)); m.eval(); y = m(L.ones(1, 4, dtype=L.float64)); [y, m.weight_u]",
 "spectral_norm_bad_iters": "L.nn.utils.spectral_norm(L.nn.Linear(4, 3), n_power_iterations=0)",
 "spectral_norm_state_dict": "L.manual_seed(0); m = L.nn.utils.spectral_norm(L.nn.Linear(4, 3)); "
                             "sorted(m.state_dict())",
 "p_spectral_norm": "L.manual_seed(0); m = L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(4, 3).double()); "
                    "y = m(L.ones(2, 4, dtype=L.float64)); [y, m.parametrizations.weight[0]._u, "
                    "sorted(m.state_dict())]",
 "p_orthogonal_default": "L.manual_seed(0); m = L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3).double()); "
                         "w = m.weight; [L.allclose(w @ w.T, L.eye(3, dtype=L.float64)), "
                         "sorted(n for n, _ in m.named_parameters())]",
 "p_orthogonal_householder_wide": "L.manual_seed(0); m = L.nn.utils.parametrizations.orthogonal(L.nn.Linear(4, 2)."
                                  "double(), orthogonal_map='householder'); w = m.weight; "
                                  "[L.allclose(w @ w.T, L.eye(2, dtype=L.float64))]",
 "p_orthogonal_bad_map": "L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3), orthogonal_map='rotation')",
 "p_orthogonal_1d": "L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3), name='bias')",
 "register_param_unsafe_shape": "class Sq(L.nn.Module):\n  def forward(self, x): return x[:2]\n"
                                "m = L.nn.Linear(3, 3)\nL.nn.utils.parametrize.register_parametrization(m, "
                                "'weight', Sq())",
 "register_param_unsafe_ok": "class Sq(L.nn.Module):\n  def forward(self, x): return x[:2]\n"
                             "m = L.nn.Linear(3, 3)\nL.nn.utils.parametrize.register_parametrization(m, 'weight', "
                             "Sq(), "
                             "unsafe=True)\nm.weight.shape",
 "register_param_cached": "class Dbl(L.nn.Module):\n  def forward(self, x): return x * 2\n"
                          "m = L.nn.Linear(3, 2).double()\nL.nn.utils.parametrize.register_parametrization(m, "
                          "'bias', Dbl())\n"
                          "with L.nn.utils.parametrize.cached():\n  a = m.bias; b = m.bias\n[a is b, "
                          "L.nn.utils.parametrize.is_parametrized(m), L.nn.utils.parametrize.is_parametrized(m, "
                          "'weight')]",
 "remove_param_keep": "class Dbl(L.nn.Module):\n  def forward(self, x): return x * 2\n"
                      "L.manual_seed(0); m = L.nn.Linear(3, 2).double()\n"
                      "L.nn.utils.parametrize.register_parametrization(m, 'bias', Dbl())\nb = m.bias.clone()\n"
                      "L.nn.utils.parametrize.remove_parametrizations(m, 'bias', leave_parametrized=True)\n"
                      "[L.equal(m.bias, b), type(m.bias).__name__]",
 "remove_param_missing": "L.nn.utils.parametrize.remove_parametrizations(L.nn.Linear(3, 2), 'bias')",
 "pack_sequence_unsorted": "pk = L.nn.utils.rnn.pack_sequence([L.ones(2), L.arange(4.), L.ones(3) * 2], "
                           "enforce_sorted=False); [pk.data, pk.batch_sizes, pk.sorted_indices, pk.unsorted_indices]",
 "pack_sequence_sorted_error": "L.nn.utils.rnn.pack_sequence([L.ones(2), L.arange(4.)])",
 "pack_sequence_empty": "L.nn.utils.rnn.pack_sequence([])",
 "pad_sequence_left": "L.nn.utils.rnn.pad_sequence([L.ones(2), L.arange(4.)], batch_first=True, padding_value=-1., "
                      "padding_side='left')",
 "pad_sequence_2d_items": "L.nn.utils.rnn.pad_sequence([L.ones(2, 3), L.zeros(1, 3)])",
 "pad_sequence_bad_side": "L.nn.utils.rnn.pad_sequence([L.ones(2)], padding_side='middle')",
 "pad_sequence_tensor_arg": "L.nn.utils.rnn.pad_sequence(L.ones(2, 3))",
 "pad_sequence_dtype_mix": "L.nn.utils.rnn.pad_sequence([L.ones(2), L.ones(1, dtype=L.float64)])",
 "unpad_sequence": "list(L.nn.utils.rnn.unpad_sequence(L.arange(12.).reshape(3, 4), L.tensor([3, 1, 2, 2])))",
 "unpack_sequence": "pk = L.nn.utils.rnn.pack_sequence([L.arange(3.), L.ones(1)]); L.nn.utils.rnn.unpack_sequence(pk)",
 "packed_to": "pk = L.nn.utils.rnn.pack_sequence([L.arange(3.), L.ones(1)]); q = pk.to(L.float64); "
              "[q.data, q.batch_sizes, type(q).__name__]",
 "packed_lstm": "L.manual_seed(0); r = L.nn.LSTM(2, 3).double(); "
                f"x = L.linspace(-1., 1., 12, {F64}).reshape(3, 2, 2); "
                "pk = L.nn.utils.rnn.pack_padded_sequence(x, [3, 1]); o, (h, c) = r(pk); "
                "u, n = L.nn.utils.rnn.pad_packed_sequence(o); [u, n, h, c]",
 "packed_gru_unsorted": "L.manual_seed(0); r = L.nn.GRU(2, 3, batch_first=True).double(); "
                        f"x = L.linspace(-1., 1., 12, {F64}).reshape(2, 3, 2); "
                        "pk = L.nn.utils.rnn.pack_padded_sequence(x, [1, 3], batch_first=True, enforce_sorted=False); "
                        "o, h = r(pk); [o.data, h]",
 "fuse_conv_bn_train_error": "c = L.nn.Conv2d(2, 2, 1); b = L.nn.BatchNorm2d(2); "
                             "L.nn.utils.fusion.fuse_conv_bn_eval(c, b)",
 "skip_init": "m = L.nn.utils.skip_init(L.nn.Linear, 3, 2); [type(m).__name__, m.weight.shape]",
 "convert_params_wrong_vector": "p = L.nn.Parameter(L.ones(3)); L.nn.utils.vector_to_parameters(L.ones(2), [p])",
})
# ---------------------------------------------------------------------- layers with odd inputs
CASES.update({
 "linear_empty_batch": "L.manual_seed(0); m = L.nn.Linear(3, 2); y = m(L.ones(0, 3)); y.sum().backward(); "
                       "[y, m.weight.grad, m.bias.grad]",
 "linear_zero_in": "L.manual_seed(0); m = L.nn.Linear(0, 2); y = m(L.ones(4, 0)); [y, m.weight.shape]",
 "linear_list_input": "L.nn.functional.linear([1., 2.], L.ones(1, 2))",
 "linear_list_weight": "L.nn.functional.linear(L.ones(2), [[1., 2.]])",
 "linear_number_bias": "L.nn.functional.linear(L.ones(2), L.ones(1, 2), 3.)",
 "activations_given_a_list": "r = []\nfor n in ('relu', 'relu6', 'elu', 'selu', 'celu', 'silu', 'mish', 'hardtanh', "
                             "'hardswish', 'hardsigmoid', 'leaky_relu', 'logsigmoid', 'hardshrink', 'softshrink', "
                             "'dropout', 'alpha_dropout', 'rrelu', 'pdist', 'one_hot', 'elu_', 'relu_'):\n"
                             "  try:\n    getattr(L.nn.functional, n)([1., 2.])\n  except Exception as e:\n"
                             "    r.append((n, type(e).__name__, str(e)))\nr",
 "linear_int_input": "L.nn.Linear(3, 2)(L.ones(2, 3, dtype=L.long))",
 "linear_wrong_features": "L.nn.Linear(3, 2)(L.ones(2, 4))",
 "linear_scalar_input": "L.nn.Linear(1, 2)(L.tensor(1.))",
 "bilinear_empty": "L.manual_seed(0); m = L.nn.Bilinear(2, 3, 4); m(L.ones(0, 2), L.ones(0, 3))",
 "bilinear_mismatch": "L.nn.Bilinear(2, 3, 4)(L.ones(1, 2), L.ones(2, 3))",
 "embedding_padding_grad": "L.manual_seed(0); e = L.nn.Embedding(4, 2, padding_idx=-1); "
                           "e(L.tensor([[3, 1], [3, 0]])).sum().backward(); [e.weight.grad, e.padding_idx]",
 "embedding_padding_out_of_range": "L.nn.Embedding(4, 2, padding_idx=4)",
 "embedding_scale_grad_freq": "L.manual_seed(0); e = L.nn.Embedding(4, 2, scale_grad_by_freq=True); "
                              "e(L.tensor([1, 1, 1, 2])).sum().backward(); [e.weight.grad]",
 "embedding_float_index": "L.nn.Embedding(4, 2)(L.tensor([1.]))",
 "embedding_out_of_range": "L.nn.Embedding(4, 2)(L.tensor([4]))",
 "embedding_empty": "L.manual_seed(0); L.nn.Embedding(4, 2)(L.ones(0, 3, dtype=L.long))",
 "embedding_from_pretrained": "e = L.nn.Embedding.from_pretrained(L.arange(6.).reshape(3, 2), freeze=False, "
                              "padding_idx=0); [e(L.tensor([0, 2])), e.weight.requires_grad]",
 "embedding_bag_sum_weights": "w = L.arange(8.).reshape(4, 2); "
                              "L.nn.functional.embedding_bag(L.tensor([0, 2, 3]), w, L.tensor([0, 2]), mode='sum', "
                              "per_sample_weights=L.tensor([1., 2., 3.]))",
 "embedding_bag_max_2d": "w = L.arange(8.).reshape(4, 2); L.nn.functional.embedding_bag(L.tensor([[0, 2], [3, 3]]), "
                         "w, mode='max')",
 "embedding_bag_last_offset": "w = L.arange(8.).reshape(4, 2); L.nn.functional.embedding_bag(L.tensor([0, 2, 3]), "
                              "w, L.tensor([0, 1, 3]), include_last_offset=True)",
 "embedding_bag_empty_bag": "w = L.arange(8.).reshape(4, 2); L.nn.functional.embedding_bag(L.tensor([0, 2]), w, "
                            "L.tensor([0, 0, 2]), mode='mean')",
 "embedding_bag_psw_mean": "w = L.arange(8.).reshape(4, 2); L.nn.functional.embedding_bag(L.tensor([0, 2]), w, "
                           "L.tensor([0]), mode='mean', per_sample_weights=L.ones(2))",
 "layernorm_empty": "m = L.nn.LayerNorm(3); y = m(L.ones(0, 3, requires_grad=True)); [y, y.grad_fn.name()]",
 "layernorm_no_affine_noncontig": "x = L.linspace(-1., 1., 12).reshape(3, 4).t(); L.nn.LayerNorm(3, "
                                  "elementwise_affine=False)(x)",
 "layernorm_wrong_shape": "L.nn.LayerNorm(4)(L.ones(4, 3))",
 "layernorm_no_bias": "m = L.nn.LayerNorm(3, bias=False); [m.bias, m(L.arange(6.).reshape(2, 3))]",
 "groupnorm_bad_groups": "L.nn.GroupNorm(3, 4)",
 "groupnorm_channels_last": "x = L.linspace(-1., 1., 64, dtype=L.float64).reshape(2, 4, 2, "
                            "4).to(memory_format=L.channels_last); "
                            "L.nn.GroupNorm(2, 4)(x)",
 "groupnorm_empty": "L.nn.GroupNorm(2, 4)(L.ones(0, 4, 3))",
 "groupnorm_wrong_channels": "L.nn.GroupNorm(2, 4)(L.ones(2, 6, 3))",
 "batchnorm_channels_last": "m = L.nn.BatchNorm2d(3); x = L.linspace(-1., 1., 48).reshape(2, 3, 2, 4)"
                            ".to(memory_format=L.channels_last); y = m(x); [y, m.running_mean, m.running_var]",
 "batchnorm_one_value": "L.nn.BatchNorm1d(3)(L.ones(1, 3))",
 "batchnorm_empty": "m = L.nn.BatchNorm1d(3); y = m(L.ones(0, 3)); [y, m.running_mean, m.num_batches_tracked]",
 "batchnorm_momentum_none": "m = L.nn.BatchNorm1d(2, momentum=None); m(L.tensor([[1., 2.], [3., 5.]])); "
                            "m(L.tensor([[0., 2.], [1., 1.]])); [m.running_mean, m.running_var]",
 "batchnorm_no_stats_eval": "m = L.nn.BatchNorm1d(2, track_running_stats=False).eval(); m(L.tensor([[1., 2.], [3., "
                            "5.]]))",
 "batchnorm_wrong_dim": "L.nn.BatchNorm2d(3)(L.ones(2, 3))",
 "instancenorm_running": "m = L.nn.InstanceNorm1d(2, track_running_stats=True); m(L.linspace(0., 1., 12).reshape(2, "
                         "2, 3)); "
                         "[m.running_mean, m.running_var]",
 "instancenorm_unbatched": "L.nn.InstanceNorm1d(2)(L.linspace(0., 1., 6).reshape(2, 3))",
 "instancenorm_one_spatial": "L.nn.InstanceNorm1d(2)(L.ones(2, 2, 1))",
 "localresponsenorm": "L.nn.LocalResponseNorm(3)(L.linspace(0., 1., 40).reshape(2, 5, 4))",
 "conv2d_channels_last_grad": "L.manual_seed(0); m = L.nn.Conv2d(3, 2, 2).double(); "
                              f"x = L.linspace(-1., 1., 96, {F64}).reshape(2, 3, 4, "
                              "4).to(memory_format=L.channels_last)"
                              ".requires_grad_(); y = m(x); y.sum().backward(); [y, x.grad, m.weight.grad]",
 "conv2d_padding_same_even": "L.manual_seed(0); m = L.nn.Conv2d(1, 1, 4, padding='same').double(); "
                             f"m(L.linspace(-1., 1., 25, {F64}).reshape(1, 1, 5, 5))",
 "conv2d_padding_same_stride": "L.nn.Conv2d(1, 1, 3, padding='same', stride=2)",
 "conv2d_padding_valid": "L.manual_seed(0); m = L.nn.Conv2d(1, 1, 3, padding='valid').double(); "
                         f"m(L.ones(1, 1, 4, 4, {F64}))",
 "conv2d_padding_bad_string": "L.nn.Conv2d(1, 1, 3, padding='full')",
 "conv2d_reflect_mode": "L.manual_seed(0); m = L.nn.Conv2d(1, 1, 3, padding=1, padding_mode='reflect').double(); "
                        f"m(L.linspace(-1., 1., 16, {F64}).reshape(1, 1, 4, 4))",
 "conv2d_bad_padding_mode": "L.nn.Conv2d(1, 1, 3, padding_mode='mirror')",
 "conv2d_groups_mismatch": "L.nn.Conv2d(3, 2, 3, groups=2)",
 "conv1d_kernel_too_big": "L.nn.Conv1d(1, 1, 5)(L.ones(1, 1, 3))",
 "conv_transpose_output_size": "L.manual_seed(0); m = L.nn.ConvTranspose2d(1, 1, 3, stride=2, padding=1).double(); "
                               f"m(L.ones(1, 1, 3, 3, {F64}), output_size=[6, 6])",
 "conv_transpose_bad_output_size": "m = L.nn.ConvTranspose2d(1, 1, 3, stride=2, padding=1); "
                                   "m(L.ones(1, 1, 3, 3), output_size=[8, 8])",
 "conv_transpose_output_padding_big": "L.nn.ConvTranspose1d(1, 1, 3, stride=2, output_padding=2)(L.ones(1, 1, 3))",
 "maxpool_ceil_dilation": f"L.nn.MaxPool2d(2, stride=2, dilation=2, ceil_mode=True)(L.linspace(0., 1., 50, {F64})"
                          ".reshape(1, 2, 5, 5))",
 "maxpool_return_indices_unpool": f"x = L.linspace(0., 1., 32, {F64}).reshape(1, 2, 4, 4); "
                                  "y, i = L.nn.MaxPool2d(2, return_indices=True)(x); "
                                  "[y, i, L.nn.MaxUnpool2d(2)(y, i), L.nn.MaxUnpool2d(2)(y, i, output_size=[5, 5])]",
 "maxunpool_bad_size": f"x = L.linspace(0., 1., 32, {F64}).reshape(1, 2, 4, 4); "
                       "y, i = L.nn.MaxPool2d(2, return_indices=True)(x); L.nn.MaxUnpool2d(2)(y, i, output_size=[9, "
                       "9])",
 "avgpool_divisor": f"L.nn.AvgPool2d(3, stride=2, padding=1, divisor_override=2)(L.linspace(0., 1., 25, {F64})"
                    ".reshape(1, 1, 5, 5))",
 "avgpool1d_ceil": f"L.nn.AvgPool1d(2, ceil_mode=True, count_include_pad=False)(L.linspace(0., 1., 5, {F64})"
                   ".reshape(1, 1, 5))",
 "adaptive_max_indices": f"L.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(L.linspace(0., 1., 35, {F64})"
                         ".reshape(1, 5, 7))",
 "adaptive_avg_none": f"L.nn.AdaptiveAvgPool2d((None, 2))(L.linspace(0., 1., 30, {F64}).reshape(1, 1, 5, 6))",
 "adaptive_avg_zero_out": "L.nn.AdaptiveAvgPool1d(0)(L.ones(1, 2, 4))",
 "fractional_maxpool_bad": "L.nn.FractionalMaxPool2d(2)",
 "lppool_inf": f"L.nn.LPPool1d(float('inf'), 2)(L.linspace(-1., 1., 8, {F64}).reshape(1, 1, 8))",
 "pixel_unshuffle": "L.nn.PixelUnshuffle(2)(L.arange(32.).reshape(1, 2, 4, 4))",
 "pixel_shuffle_bad": "L.nn.PixelShuffle(2)(L.ones(1, 3, 2, 2))",
 "channel_shuffle": "L.nn.ChannelShuffle(2)(L.arange(24.).reshape(1, 6, 2, 2))",
 "upsample_nearest_exact": "L.nn.Upsample(scale_factor=1.7, mode='nearest-exact')(L.arange(10.).reshape(1, 1, 10))",
 "upsample_trilinear": f"L.nn.Upsample(size=(3, 2, 3), mode='trilinear')(L.linspace(0., 1., 16, {F64})"
                       ".reshape(1, 1, 2, 2, 4))",
 "upsample_recompute": "L.nn.functional.interpolate(L.arange(10.).reshape(1, 1, 10), scale_factor=1.35, "
                       "mode='linear', recompute_scale_factor=True)",
 "upsample_both_given": "L.nn.functional.interpolate(L.ones(1, 1, 4), size=5, scale_factor=2.)",
 "upsample_bad_mode_dims": "L.nn.functional.interpolate(L.ones(1, 1, 4), scale_factor=2., mode='bilinear')",
 "upsample_align_nearest": "L.nn.functional.interpolate(L.ones(1, 1, 4), scale_factor=2., align_corners=True)",
 "upsample_antialias": f"L.nn.functional.interpolate(L.linspace(0., 1., 64, {F64}).reshape(1, 1, 8, 8), size=(3, 3), "
                       "mode='bilinear', antialias=True)",
 "fold_bad_blocks": "L.nn.Fold((4, 4), 2)(L.ones(1, 4, 5))",
 "unfold_3d_input": "L.nn.Unfold(2)(L.arange(18.).reshape(2, 3, 3))",
 "flatten_unflatten": "L.nn.Unflatten(1, (2, -1))(L.nn.Flatten(0, 1)(L.arange(24.).reshape(2, 3, 4)).T)",
 "unflatten_bad": "L.nn.Unflatten(1, (5, 2))(L.ones(2, 6))",
 "identity_args": "L.nn.Identity(3, unused=True)(L.ones(2))",
 "dropout_p1": "L.nn.Dropout(1.0)(L.ones(3))",
 "dropout_bad_p": "L.nn.Dropout(1.5)",
 "dropout2d_3d_input": "L.manual_seed(0); L.nn.Dropout2d(0.5)(L.ones(2, 3, 4))",
 "alpha_dropout_eval": "L.nn.AlphaDropout(0.5).eval()(L.arange(3.))",
 "rrelu_eval": "L.nn.RReLU(0.1, 0.3).eval()(L.linspace(-1., 1., 5))",
 "rrelu_bad_bounds": "L.manual_seed(0); L.nn.RReLU(0.5, 0.1)(L.linspace(-1., 1., 5))",
 "softmax2d_bad": "L.nn.Softmax2d()(L.ones(3, 4))",
 "softmax_implicit_dim": "L.nn.Softmax()(L.arange(6.).reshape(2, 3))",
 "prelu_channels": "m = L.nn.PReLU(3, init=0.1); [m(L.linspace(-1., 1., 12).reshape(2, 3, 2))]",
 "prelu_wrong_channels": "L.nn.PReLU(4)(L.ones(2, 3, 2))",
 "threshold": "L.nn.Threshold(0.1, 20.)(L.linspace(-1., 1., 5))",
 "hardshrink_negative_lambda": "L.nn.Hardshrink(-0.5)(L.linspace(-1., 1., 5))",
 "softshrink_negative_lambda": "L.nn.Softshrink(-0.5)(L.linspace(-1., 1., 5))",
 "glu_odd": "L.nn.GLU()(L.ones(2, 3))",
 "cosine_similarity_broadcast": "L.nn.CosineSimilarity(dim=-1, eps=0.5)(L.ones(2, 1, 3), L.zeros(4, 3))",
 "pairwise_distance_keepdim": "L.nn.PairwiseDistance(p=1., keepdim=True)(L.arange(6.).reshape(2, 3), L.ones(3))",
 "pairwise_distance_p0": "L.nn.functional.pairwise_distance(L.arange(6.).reshape(2, 3), L.ones(3), p=0.)",
 "transformer_encoder_layer": "L.manual_seed(0); m = L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, "
                              "batch_first=True, "
                              "norm_first=True).double(); "
                              f"m(L.linspace(-1., 1., 24, {F64}).reshape(2, 3, 4))",
 "transformer_bad_heads": "L.nn.TransformerEncoderLayer(5, 2)",
 "mha_key_padding_mask": "L.manual_seed(0); m = L.nn.MultiheadAttention(4, 2, batch_first=True).double(); "
                         f"x = L.linspace(-1., 1., 24, {F64}).reshape(2, 3, 4); "
                         "o, w = m(x, x, x, key_padding_mask=L.tensor([[False, False, True], [False, True, "
                         "True]])); [o, w]",
 "mha_need_weights_false": "L.manual_seed(0); m = L.nn.MultiheadAttention(4, 2).double(); "
                           f"x = L.linspace(-1., 1., 24, {F64}).reshape(3, 2, 4); o, w = m(x, x, x, "
                           "need_weights=False); "
                           "[o, w]",
 "mha_unaveraged": "L.manual_seed(0); m = L.nn.MultiheadAttention(4, 2, kdim=3, vdim=5).double(); "
                   f"q = L.linspace(-1., 1., 8, {F64}).reshape(2, 4); "
                   f"k = L.linspace(-1., 1., 9, {F64}).reshape(3, 3); v = L.linspace(-1., 1., 15, {F64}).reshape(3, "
                   "5); "
                   "o, w = m(q, k, v, average_attn_weights=False); [o, w]",
 "mha_bad_mask_shape": "m = L.nn.MultiheadAttention(4, 2); x = L.ones(3, 2, 4); m(x, x, x, attn_mask=L.ones(2, 2))",
 "lstm_proj": "L.manual_seed(0); r = L.nn.LSTM(2, 4, proj_size=2, num_layers=2).double(); "
              f"o, (h, c) = r(L.linspace(-1., 1., 12, {F64}).reshape(3, 2, 2)); [o, h, c]",
 "lstm_bad_proj": "L.nn.LSTM(2, 4, proj_size=4)",
 "gru_bidirectional_unbatched": "L.manual_seed(0); r = L.nn.GRU(2, 3, bidirectional=True).double(); "
                                f"o, h = r(L.linspace(-1., 1., 6, {F64}).reshape(3, 2)); [o, h]",
 "rnn_wrong_hidden": "r = L.nn.RNN(2, 3); r(L.ones(3, 2, 2), L.ones(1, 3, 3))",
 "rnn_wrong_input": "r = L.nn.RNN(2, 3); r(L.ones(3, 2, 4))",
 "rnn_bad_nonlinearity": "L.nn.RNN(2, 3, nonlinearity='sigmoid')",
 "rnn_empty_batch": "L.manual_seed(0); r = L.nn.RNN(2, 3); o, h = r(L.ones(3, 0, 2)); [o, h]",
 "zero_pad": "L.nn.ZeroPad2d((1, -1, 2, 0))(L.arange(9.).reshape(1, 3, 3))",
 "constant_pad_negative": "L.nn.ConstantPad1d((-2, 1), 3.5)(L.arange(6.).reshape(1, 2, 3))",
 "reflection_pad_too_big": "L.nn.ReflectionPad1d(3)(L.arange(6.).reshape(1, 2, 3))",
 "circular_pad_negative": "L.nn.CircularPad1d((-1, 2))(L.arange(6.).reshape(1, 2, 3))",
 "sequential_slice_repr": "s = L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh(), L.nn.Sigmoid()); [repr(s[1:]), len(s[::2])]",
 "sequential_bad_index": "L.nn.Sequential(L.nn.ReLU())[3]",
 "module_list_insert": "l = L.nn.ModuleList([L.nn.ReLU()]); l.insert(0, L.nn.Tanh()); l.extend([L.nn.ELU()]); repr(l)",
 "module_dict_bad_key": "L.nn.ModuleDict({'a.b': L.nn.ReLU()})",
 "parameter_dict": "d = L.nn.ParameterDict({'a': L.nn.Parameter(L.ones(2)), 'b': 3}); [sorted(d.keys()), d['b']]",
 "register_buffer_bad_name": "m = L.nn.Module(); m.register_buffer('a.b', L.ones(1))",
 "register_parameter_tensor": "m = L.nn.Module(); m.register_parameter('w', L.ones(1))",
 "load_state_dict_shape": "L.nn.Linear(3, 2).load_state_dict({'weight': L.ones(3, 3), 'bias': L.ones(2)})",
 "load_state_dict_assign": "m = L.nn.Linear(2, 1); w = L.ones(1, 2, dtype=L.float64); "
                           "m.load_state_dict({'weight': w, 'bias': L.zeros(1, dtype=L.float64)}, assign=True); "
                           "[m.weight.dtype, type(m.weight).__name__, m.weight.requires_grad]",
 "load_state_dict_non_strict": "m = L.nn.Linear(2, 1); r = m.load_state_dict({'weight': L.ones(1, 2), 'extra': 1}, "
                               "strict=False); [sorted(r.missing_keys), sorted(r.unexpected_keys)]",
})
# ---------------------------------------------------------------------- losses with odd arguments
LF = "L.nn.functional"
CASES.update({
 "ce_int_target_float_dtype_mismatch": f"{LF}.cross_entropy(L.ones(2, 3), L.tensor([0., 1.]))",
 "ce_target_out_of_range": f"{LF}.cross_entropy(L.ones(2, 3), L.tensor([0, 3]))",
 "ce_probs_wrong_shape": f"{LF}.cross_entropy(L.ones(2, 3), L.ones(2, 4))",
 "ce_weight_wrong_len": f"{LF}.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))",
 "ce_bad_reduction": f"{LF}.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), reduction='avg')",
 "ce_smoothing_bad": f"{LF}.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), label_smoothing=1.5)",
 "ce_int_input": f"{LF}.cross_entropy(L.ones(2, 3, dtype=L.long), L.tensor([0, 1]))",
 "ce_noncontig_channels_last": f"x = L.linspace(-1., 1., 48, {F64}).reshape(2, 3, 2, "
                               "4).to(memory_format=L.channels_last)"
                               f".requires_grad_(); t = L.tensor([[[0, 1, 2, 0], [2, 2, 1, 0]], [[1, 1, 1, 0], "
                               f"[0, 2, 2, 1]]]); l = {LF}.cross_entropy(x, t, reduction='none'); l.sum().backward(); "
                               "[l, x.grad]",
 "nll_target_batch_mismatch": f"{LF}.nll_loss(L.ones(2, 3), L.tensor([0, 1, 2]))",
 "nll_1d_input_scalar_target": f"{LF}.nll_loss(L.tensor([-1., -2.]), L.tensor(1))",
 "bce_shape_mismatch": f"{LF}.binary_cross_entropy(L.full((2,), 0.5), L.ones(3))",
 "bce_broadcast_target": f"{LF}.binary_cross_entropy(L.full((2, 3), 0.5), L.ones(3))",
 "bce_out_of_range": f"{LF}.binary_cross_entropy(L.tensor([1.5]), L.ones(1))",
 "bce_weight_broadcast": f"{LF}.binary_cross_entropy(L.full((2, 3), 0.25), L.ones(2, 3), weight=L.tensor([1., 2., "
                         "3.]))",
 "bce_logits_shape_mismatch": f"{LF}.binary_cross_entropy_with_logits(L.ones(2, 3), L.ones(3))",
 "bce_logits_pos_weight_bcast": f"x = L.linspace(-3., 3., 6, {F64}).reshape(2, 3).requires_grad_(); "
                                f"l = {LF}.binary_cross_entropy_with_logits(x, L.ones(2, 3, {F64}), "
                                f"pos_weight=L.tensor([[2.], [0.5]], {F64}), reduction='sum'); l.backward(); [l, "
                                "x.grad]",
 "bce_logits_extreme": f"x = L.tensor([-1000., 1000., 0.], {F64}, requires_grad=True); "
                       f"l = {LF}.binary_cross_entropy_with_logits(x, L.tensor([1., 0., 0.5], {F64}), "
                       "reduction='none'); "
                       "l.sum().backward(); [l, x.grad]",
 "mse_broadcast_warns": f"{LF}.mse_loss(L.ones(2, 3), L.ones(3))",
 "mse_int": f"{LF}.mse_loss(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long))",
 "mse_mixed_dtype": f"{LF}.mse_loss(L.ones(2), L.ones(2, dtype=L.float64))",
 "l1_empty_mean": f"{LF}.l1_loss(L.ones(0), L.ones(0))",
 "smooth_l1_beta_zero": f"x = L.linspace(-1., 1., 5, {F64}).requires_grad_(); l = {LF}.smooth_l1_loss(x, L.zeros(5, "
                        f"{F64}), "
                        "beta=0.); l.backward(); [l, x.grad]",
 "smooth_l1_beta_negative": f"{LF}.smooth_l1_loss(L.ones(2), L.zeros(2), beta=-1.)",
 "huber_delta_negative": f"{LF}.huber_loss(L.ones(2), L.zeros(2), delta=-1.)",
 "huber_delta_zero": f"{LF}.huber_loss(L.ones(2), L.zeros(2), delta=0.)",
 "kl_div_mean_warns": f"{LF}.kl_div(L.full((2, 3), -1.), L.full((2, 3), 0.2), reduction='mean')",
 "kl_div_zero_target": f"x = L.full((3,), -1., {F64}, requires_grad=True); l = {LF}.kl_div(x, L.tensor([0., 0.5, 1.], "
                       f"{F64}), reduction='sum'); l.backward(); [l, x.grad]",
 "poisson_nll_eps": f"{LF}.poisson_nll_loss(L.tensor([0., 1.], {F64}), L.tensor([1., 2.], {F64}), log_input=False, "
                    "eps=0.5, reduction='none')",
 "gaussian_nll_negative_var": f"{LF}.gaussian_nll_loss(L.ones(2), L.zeros(2), L.tensor([1., -1.]))",
 "gaussian_nll_var_broadcast": f"{LF}.gaussian_nll_loss(L.ones(2, 3, {F64}), L.zeros(2, 3, {F64}), L.full((2, 1), 2., "
                               f"{F64}), reduction='none')",
 "gaussian_nll_var_bad_shape": f"{LF}.gaussian_nll_loss(L.ones(2, 3), L.zeros(2, 3), L.ones(3, 2))",
 "gaussian_nll_var_scalar": f"{LF}.gaussian_nll_loss(L.ones(2, 3, {F64}), L.zeros(2, 3, {F64}), 2.0)",
 "ctc_reductions": f"lp = L.linspace(-3., -0.1, 30, {F64}).reshape(5, 2, 3).log_softmax(2); t = L.tensor([1, 2, 1]); "
                   f"[{LF}.ctc_loss(lp, t, [5, 4], [2, 1], reduction=r) for r in ('none', 'sum', 'mean')]",
 "ctc_impossible_zero_inf": f"lp = L.linspace(-3., -0.1, 12, {F64}).reshape(2, 2, 3).log_softmax(2); "
                            f"t = L.tensor([[1, 1, 1], [2, 2, 2]]); [{LF}.ctc_loss(lp, t, [2, 2], [3, 1], "
                            "reduction='none', zero_infinity=z) for z in (False, True)]",
 "ctc_blank_in_target": f"lp = L.zeros(3, 1, 3).log_softmax(2); {LF}.ctc_loss(lp, L.tensor([[0, 1]]), [3], [2])",
 "ctc_unbatched": f"lp = L.linspace(-3., -0.1, 15, {F64}).reshape(5, 3).log_softmax(1); "
                  f"{LF}.ctc_loss(lp, L.tensor([1, 2]), L.tensor(5), L.tensor(2))",
 "multilabel_margin": f"x = L.linspace(-1., 1., 8, {F64}).reshape(2, 4).requires_grad_(); t = L.tensor([[3, 0, -1, 1], "
                      f"[1, 2, 3, -1]]); l = {LF}.multilabel_margin_loss(x, t); l.backward(); [l, x.grad]",
 "multilabel_margin_bad_target": f"{LF}.multilabel_margin_loss(L.ones(2, 4), L.ones(2, 3, dtype=L.long))",
 "multi_margin_weight": f"x = L.linspace(-1., 1., 8, {F64}).reshape(2, 4).requires_grad_(); "
                        f"l = {LF}.multi_margin_loss(x, L.tensor([3, 0]), weight=L.tensor([1., 2., 3., 4.], {F64}), "
                        "reduction='none'); l.sum().backward(); [l, x.grad]",
 "multi_margin_bad_p": f"{LF}.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), p=3)",
 "triplet_with_distance": f"a = L.linspace(-1., 1., 6, {F64}).reshape(2, 3); "
                          f"{LF}.triplet_margin_with_distance_loss(a, a.flip(0), a * 2, distance_function=lambda x, y: "
                          "(x - y).abs().sum(-1), swap=True, reduction='none')",
 "triplet_dim_mismatch": f"{LF}.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3))",
 "margin_ranking_bcast": f"{LF}.margin_ranking_loss(L.ones(2, 1), L.zeros(3), L.ones(2, 3), reduction='none')",
 "hinge_embedding": f"{LF}.hinge_embedding_loss(L.linspace(-1., 2., 4, {F64}), L.tensor([1, -1, -1, 1]), margin=0.5, "
                    "reduction='none')",
 "cosine_embedding_bad_target": f"{LF}.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3))",
 "soft_margin_empty_mean": f"{LF}.soft_margin_loss(L.ones(0), L.ones(0))",
 "multilabel_soft_margin_weight": f"{LF}.multilabel_soft_margin_loss(L.linspace(-1., 1., 6, {F64}).reshape(2, 3), "
                                  f"L.tensor([[1, 0, 1], [0, 1, 1]]), weight=L.tensor([1., 2., 3.], {F64}), "
                                  "reduction='none')",
 "loss_module_size_average": "L.nn.MSELoss(size_average=False)(L.ones(2), L.zeros(2))",
 "loss_module_reduce_false": "L.nn.L1Loss(reduce=False)(L.ones(2), L.zeros(2))",
 "nll_loss2d_ignore_all": f"{LF}.nll_loss(L.zeros(1, 3, 2, 2), L.full((1, 2, 2), 5), ignore_index=5)",
})


def _program(code):
    """The program as a function of the library (``helpers.program_of``), with this file's
    helpers and modules in scope."""
    return program_of(code, steps=steps, saved=saved, damaged=damaged, Numbers=Numbers, iterable=iterable,
                      Pair=Pair, collections=collections, io=io, np=np, zipfile=zipfile)


@pytest.mark.parametrize("name", CASES)
def test_gives_torchs_result_or_error(name):
    twin(_program(CASES[name]), ulps=COMPOSITE_ULPS)


# ---------------------------------------------------------------------- threads
def _train_on_a_loader(L, seed):
    """A small convolutional model trained for two epochs on its own shuffled loader, with a
    momentum SGD, a step schedule and gradient clipping: its weights and learning rate after."""
    g = torch.Generator().manual_seed(seed)
    data, labels = torch.randn(12, 2, 5, generator=g, dtype=torch.float64), torch.randint(3, (12,), generator=g)
    init = [torch.randn(4, 2, 3, generator=g, dtype=torch.float64),
            torch.randn(3, 12, generator=g, dtype=torch.float64)]
    as_lib = (lambda t: t) if L is torch else internals.from_torch
    model = L.nn.Sequential(L.nn.Conv1d(2, 4, 3, bias=False), L.nn.BatchNorm1d(4), L.nn.ReLU(), L.nn.Flatten(),
                            L.nn.Linear(12, 3, bias=False)).double()
    with L.no_grad():
        model[0].weight.copy_(as_lib(init[0]))
        model[4].weight.copy_(as_lib(init[1]))
    opt = L.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
    schedule = L.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    loader = L.utils.data.DataLoader(L.utils.data.TensorDataset(as_lib(data), as_lib(labels)), batch_size=5,
                                     shuffle=True, generator=L.Generator().manual_seed(seed))
    for _ in range(2):
        for x, y in loader:
            opt.zero_grad()
            L.nn.functional.cross_entropy(model(x), y).backward()
            L.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            schedule.step()
    return [p.detach().clone() for p in model.parameters()] + [model[1].running_var.clone(), schedule.get_last_lr()]


def test_two_threads_train_two_models_each_on_its_own_loader():
    """Each thread ends where the same training run alone in torch ends: loaders, generators,
    schedulers, batch-norm statistics and clipping share nothing between the threads."""
    got = {}
    errors = in_threads(lambda k: got.__setitem__(k, _train_on_a_loader(internals, k)), n=2)
    assert errors == []
    for k in range(2):
        twin(lambda L, k=k: got[k] if L is internals else _train_on_a_loader(torch, k), ulps=8 * COMPOSITE_ULPS)


@pytest.mark.parametrize("shared_iterator", [False, True])
def test_one_loader_read_from_two_threads(shared_iterator):
    """Two threads iterate one DataLoader: each its own pass (both see every batch, in order),
    or one shared iterator under a lock (between them, every batch once)."""
    loader = internals.utils.data.DataLoader(Numbers(internals, 40), batch_size=3)
    expected = [[b[0].tolist(), b[1].tolist()] for b in torch.utils.data.DataLoader(Numbers(torch, 40), batch_size=3)]
    seen, lock, shared = {0: [], 1: []}, threading.Lock(), iter(loader)

    def read(k):
        if not shared_iterator:
            seen[k] = [[b[0].tolist(), b[1].tolist()] for b in loader]
            return
        while True:
            with lock:
                batch = next(shared, None)
            if batch is None:
                return
            seen[k].append([batch[0].tolist(), batch[1].tolist()])
    assert in_threads(read, n=2) == []
    if shared_iterator:
        assert sorted(seen[0] + seen[1]) == sorted(expected)
    else:
        assert seen[0] == seen[1] == expected
