"""Differential tests of ``nn.utils.parametrize`` and ``nn.utils.parametrizations`` against torch:
the class swap and the state dict's keys, forward values and gradients through a
parametrization, assignment through ``right_inverse``, removal, deepcopy, caching, weight_norm
and spectral_norm from the same seed (parameters, power-iteration buffers, optimizer steps),
state dicts and checkpoint files exchanged both ways, and the errors torch raises.

Each program takes ``lib`` (torch or internals) and is run with both.
"""
import copy
import importlib
import io
import pickle
import warnings

import pytest
import torch
from helpers import PRODUCT_ULPS, assert_same, assert_same_error

import internals

I = internals.from_torch      # noqa: E741

# Float32 tolerance for values whose error is relative to a whole vector, not to each element:
# gradients (a projection subtracted, near zero in places) and the power iteration's unit
# vectors, whose small components carry the rounding of the large ones after 16 or more
# matrix-vector products summed in another order than torch's (tens of ulps of a small entry).
SUMS_TOL = dict(rtol=1e-5, atol=1e-6)


def P(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.parametrize")


def PZ(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.parametrizations")


def symmetric(lib):
    """A parametrization with a right inverse: the upper triangle mirrored (exact arithmetic)."""
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def doubled(lib):
    """A parametrization without a right inverse."""
    class Doubled(lib.nn.Module):
        def forward(self, X):
            return X * 2
    return Doubled()


def split_sum(lib):
    """A parametrization of two tensors: ``right_inverse`` splits the weight into halves."""
    class SplitSum(lib.nn.Module):
        def forward(self, A, B):
            return A + B

        def right_inverse(self, W):
            return W / 2, W / 2
    return SplitSum()


def linear(lib, seed=0, n_in=4, n_out=4):
    lib.manual_seed(seed)
    return lib.nn.Linear(n_in, n_out)


def both(program):
    return program(internals), program(torch)


def assert_same_module(ours, theirs, **tol):
    """Same class name, same state-dict keys, and the same tensors under them."""
    assert type(ours).__name__ == type(theirs).__name__
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for key in theirs_sd:
        assert_same(ours_sd[key], theirs_sd[key], **tol)


# =============================================================================================
# parametrize
# =============================================================================================

def test_register_swaps_class_and_moves_original():
    def program(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", symmetric(lib))
        return m
    ours, theirs = both(program)
    assert_same_module(ours, theirs)
    assert type(ours).__name__ == "ParametrizedLinear" and type(ours).__bases__[0] is internals.nn.Linear
    assert list(dict(ours.named_parameters())) == list(dict(theirs.named_parameters()))
    assert P(internals).is_parametrized(ours) and P(internals).is_parametrized(ours, "weight")
    assert not P(internals).is_parametrized(ours, "bias")
    assert P(internals).type_before_parametrizations(ours) is internals.nn.Linear
    # Another Linear keeps its plain class: the property lives on this module's class only.
    assert type(internals.nn.Linear(2, 2)) is internals.nn.Linear
    assert_same(ours.weight, theirs.weight)
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name()


def test_forward_and_gradients_through_a_chain():
    def program(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", symmetric(lib))
        P(lib).register_parametrization(m, "weight", doubled(lib))
        x = lib.arange(8.0).reshape(2, 4) / 3
        m(x).sum().backward()
        return m, m.parametrizations.weight.original.grad
    (ours, ours_grad), (theirs, theirs_grad) = both(program)
    assert len(ours.parametrizations.weight) == len(theirs.parametrizations.weight) == 2
    assert_same(ours.weight, theirs.weight)
    assert_same(ours_grad, theirs_grad, ulps=PRODUCT_ULPS)
    assert_same(ours.bias.grad, theirs.bias.grad, ulps=PRODUCT_ULPS)


def test_assignment_runs_right_inverse_into_the_same_parameter():
    def program(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", symmetric(lib))
        original = m.parametrizations.weight.original
        m.weight = lib.arange(16.0).reshape(4, 4)
        assert m.parametrizations.weight.original is original
        return m
    ours, theirs = both(program)
    assert_same_module(ours, theirs)
    assert_same(ours.weight, theirs.weight)


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations(leave_parametrized):
    def program(lib):
        m = linear(lib)
        before = m.weight
        P(lib).register_parametrization(m, "weight", symmetric(lib))
        P(lib).remove_parametrizations(m, "weight", leave_parametrized=leave_parametrized)
        assert m.weight is before       # the Parameter object survives both ways
        return m
    ours, theirs = both(program)
    assert type(ours) is internals.nn.Linear
    assert not hasattr(ours, "parametrizations")
    assert_same_module(ours, theirs)
    assert isinstance(ours.weight, internals.nn.Parameter)


def test_several_originals():
    def program(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", split_sum(lib))
        m(lib.ones(3, 4)).sum().backward()
        return m
    ours, theirs = both(program)
    assert_same_module(ours, theirs)
    assert_same(ours.weight, theirs.weight)
    for name in ("original0", "original1"):
        assert_same(getattr(ours.parametrizations.weight, name).grad,
                    getattr(theirs.parametrizations.weight, name).grad)
    # Left parametrized, the weight becomes a new Parameter holding the parametrized value.
    P(internals).remove_parametrizations(ours, "weight")
    P(torch).remove_parametrizations(theirs, "weight")
    assert_same_module(ours, theirs)
    assert isinstance(ours.weight, internals.nn.Parameter)


def test_buffer_is_parametrized_as_a_buffer():
    def program(lib):
        m = lib.nn.BatchNorm1d(4)
        P(lib).register_parametrization(m, "running_var", doubled(lib))
        return m
    ours, theirs = both(program)
    assert_same_module(ours, theirs)
    assert list(dict(ours.named_buffers())) == list(dict(theirs.named_buffers()))
    assert_same(ours.running_var, theirs.running_var)


def test_cached_computes_once():
    m = linear(internals)
    P(internals).register_parametrization(m, "weight", symmetric(internals))
    assert m.weight is not m.weight
    with P(internals).cached():
        with P(internals).cached():     # nests
            first = m.weight
        assert m.weight is first
    assert m.weight is not first


def test_deepcopy_and_pickle():
    ours, theirs = both(lambda lib: P(lib).register_parametrization(linear(lib), "weight", symmetric(lib)))
    ours_copy, theirs_copy = copy.deepcopy(ours), copy.deepcopy(theirs)
    assert_same_module(ours_copy, theirs_copy)
    assert ours_copy.parametrizations.weight.original is not ours.parametrizations.weight.original
    error, torch_error = assert_same_error(lambda: pickle.dumps(ours), lambda: pickle.dumps(theirs))
    assert str(error) == str(torch_error)


def test_training_mode_follows_the_module():
    m = linear(internals).eval()
    parametrization = symmetric(internals)
    P(internals).register_parametrization(m, "weight", parametrization)
    assert parametrization.training is False


def wrong_shape(lib):
    class Row(lib.nn.Module):
        def forward(self, X):
            return X[0]
    return Row()


def wrong_dtype(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return X.double()
    return Double()


@pytest.mark.parametrize("case", ["no_such_tensor", "shape", "dtype", "shape_on_top", "remove_unknown",
                                  "leave_several", "assign_without_inverse", "inverse_returns_int"])
def test_errors_as_torch(case):
    def program(lib):
        m, p = linear(lib), P(lib)
        if case == "no_such_tensor":
            p.register_parametrization(m, "scale", doubled(lib))
        elif case == "shape":
            p.register_parametrization(m, "weight", wrong_shape(lib))
        elif case == "dtype":
            p.register_parametrization(m, "weight", wrong_dtype(lib))
        elif case == "shape_on_top":
            p.register_parametrization(m, "weight", doubled(lib))
            p.register_parametrization(m, "weight", wrong_shape(lib))
        elif case == "remove_unknown":
            p.remove_parametrizations(m, "weight")
        elif case == "leave_several":
            p.register_parametrization(m, "weight", split_sum(lib))
            p.remove_parametrizations(m, "weight", leave_parametrized=False)
        elif case == "assign_without_inverse":
            p.register_parametrization(m, "weight", doubled(lib))
            m.weight = lib.ones(4, 4)
        elif case == "inverse_returns_int":
            class Bad(lib.nn.Module):
                def forward(self, X):
                    return X

                def right_inverse(self, X):
                    return 3
            p.register_parametrization(m, "weight", Bad())
    ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)       # sizes and dtypes named as torch names them


def test_unsafe_allows_a_new_shape():
    def program(lib):
        m = linear(lib)
        P(lib).register_parametrization(m, "weight", wrong_shape(lib), unsafe=True)
        return m.weight
    ours, theirs = both(program)
    assert_same(ours, theirs)


# =============================================================================================
# weight_norm
# =============================================================================================

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values_and_gradients(dim):
    def program(lib):
        m = PZ(lib).weight_norm(linear(lib, n_in=5, n_out=3), dim=dim)
        x = lib.arange(10.0).reshape(2, 5) / 7 - 0.5
        m(x).pow(2).sum().backward()
        return m
    ours, theirs = both(program)
    assert_same_module(ours, theirs, ulps=PRODUCT_ULPS)
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)
    # dims 0 and 1 (the last of a Linear's weight) are fused, None (-1) is the composite
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name()
    for name in ("original0", "original1"):
        assert_same(getattr(ours.parametrizations.weight, name).grad,
                    getattr(theirs.parametrizations.weight, name).grad, **SUMS_TOL)


def test_weight_norm_on_a_convolution_middle_dim():
    def program(lib):
        lib.manual_seed(0)
        return PZ(lib).weight_norm(lib.nn.Conv2d(2, 3, 3), dim=2)
    ours, theirs = both(program)
    assert_same_module(ours, theirs, ulps=PRODUCT_ULPS)
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)


def test_weight_norm_loads_the_hook_based_keys():
    """A checkpoint with ``weight_g``/``weight_v`` (the older hook-based weight_norm) loads."""
    ours, theirs = both(lambda lib: PZ(lib).weight_norm(linear(lib, seed=1)))
    source = PZ(torch).weight_norm(linear(torch, seed=2)).state_dict()
    old = {"bias": source["bias"], "weight_g": source["parametrizations.weight.original0"],
           "weight_v": source["parametrizations.weight.original1"]}
    ours.load_state_dict({k: I(v) for k, v in old.items()})
    theirs.load_state_dict(old)
    assert_same_module(ours, theirs)


# =============================================================================================
# spectral_norm
# =============================================================================================

@pytest.mark.parametrize("build", ["linear", "conv", "conv_transpose", "dim1"])
def test_spectral_norm_from_the_same_seed(build):
    def program(lib):
        lib.manual_seed(0)
        if build == "linear":
            m = PZ(lib).spectral_norm(lib.nn.Linear(5, 3))
        elif build == "conv":
            m = PZ(lib).spectral_norm(lib.nn.Conv2d(2, 4, 3), n_power_iterations=3)
        elif build == "conv_transpose":    # dim defaults to 1, the output channels
            m = PZ(lib).spectral_norm(lib.nn.ConvTranspose2d(2, 4, 3))
        else:
            m = PZ(lib).spectral_norm(lib.nn.Linear(5, 3), dim=1)
        w = m.weight
        w.pow(2).sum().backward()
        return m, w
    (ours, ours_w), (theirs, theirs_w) = both(program)
    assert_same_module(ours, theirs, **SUMS_TOL)
    assert_same(ours_w, theirs_w, ulps=PRODUCT_ULPS)
    assert ours_w.grad_fn.name() == theirs_w.grad_fn.name()
    assert_same(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad,
                **SUMS_TOL)


def test_spectral_norm_eval_leaves_the_vectors():
    ours, theirs = both(lambda lib: PZ(lib).spectral_norm(linear(lib)).eval())
    u_before = ours.parametrizations.weight[0]._u.clone()
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)
    assert ours.parametrizations.weight[0]._u.tolist() == u_before.tolist()
    ours.train(), theirs.train()
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)
    assert ours.parametrizations.weight[0]._u.tolist() != u_before.tolist()
    assert_same_module(ours, theirs, **SUMS_TOL)


def test_spectral_norm_of_a_vector():
    def program(lib):
        m = lib.nn.BatchNorm1d(4)
        lib.nn.init.uniform_(m.weight)
        return PZ(lib).spectral_norm(m)
    ours, theirs = both(program)
    assert_same_module(ours, theirs)
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("kwargs", [dict(name="scale"), dict(n_power_iterations=0), dict(dim=2), dict(dim=-3)],
                         ids=["no_tensor", "no_iterations", "dim_high", "dim_low"])
def test_spectral_norm_errors(kwargs):
    ours, theirs = assert_same_error(lambda: PZ(internals).spectral_norm(linear(internals), **kwargs),
                                     lambda: PZ(torch).spectral_norm(linear(torch), **kwargs))
    assert str(ours) == str(theirs)


# =============================================================================================
# state dicts both ways, and training
# =============================================================================================

@pytest.mark.parametrize("which", ["weight_norm", "spectral_norm"])
def test_state_dict_files_both_ways(which):
    """A checkpoint file saved by either library loads in the other's parametrized module."""
    ours, _ = both(lambda lib: getattr(PZ(lib), which)(linear(lib, seed=1)))
    _, theirs = both(lambda lib: getattr(PZ(lib), which)(linear(lib, seed=2)))
    buffer = io.BytesIO()
    internals.save(ours.state_dict(), buffer)
    buffer.seek(0)
    fresh_theirs = getattr(PZ(torch), which)(linear(torch, seed=3))
    fresh_theirs.load_state_dict(torch.load(buffer))
    assert_same_module(ours, fresh_theirs)
    buffer = io.BytesIO()
    torch.save(theirs.state_dict(), buffer)
    buffer.seek(0)
    fresh_ours = getattr(PZ(internals), which)(linear(internals, seed=3))
    fresh_ours.load_state_dict(internals.load(buffer))
    assert_same_module(fresh_ours, theirs)


@pytest.mark.parametrize("which", ["symmetric", "weight_norm", "spectral_norm"])
def test_sgd_trajectory(which):
    """Five SGD steps with momentum on a parametrized layer follow torch's."""
    def program(lib):
        m = linear(lib, n_in=5, n_out=3)
        if which == "symmetric":
            m = P(lib).register_parametrization(linear(lib), "weight", symmetric(lib))
        else:
            m = getattr(PZ(lib), which)(m)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        x = lib.arange(15.0 if which != "symmetric" else 12.0).reshape(3, -1) / 11 - 0.4
        weights = []
        for _ in range(5):
            opt.zero_grad()
            m(x).tanh().sum().backward()
            opt.step()
            weights.append(m.weight.detach())
        return m, weights
    (ours, ours_weights), (theirs, theirs_weights) = both(program)
    for o, t in zip(ours_weights, theirs_weights):
        assert_same(o, t, **SUMS_TOL)
    assert_same_module(ours, theirs, **SUMS_TOL)


# =============================================================================================
# the older hook-based nn.utils.weight_norm and nn.utils.spectral_norm
# =============================================================================================

@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")
@pytest.mark.parametrize("which", ["weight_norm", "spectral_norm"])
def test_hook_based_forms(which):
    """State-dict keys, the weight each forward sets, gradients, a second registration refused,
    and removal back to one ``weight`` parameter."""
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = getattr(lib.nn.utils, which)(linear(lib, n_in=5, n_out=3))
        x = lib.arange(10.0).reshape(2, 5) / 7 - 0.5
        m(x).pow(2).sum().backward()
        return m, [w.category for w in caught]
    (ours, ours_warnings), (theirs, theirs_warnings) = both(program)
    assert ours_warnings == theirs_warnings
    assert_same_module(ours, theirs, **SUMS_TOL)
    assert_same(ours.weight, theirs.weight, ulps=PRODUCT_ULPS)
    # weight_norm's dim 0 takes the fused _weight_norm_interface: WeightNormInterfaceBackward0
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name()
    for name, param in theirs.named_parameters():
        assert_same(dict(ours.named_parameters())[name].grad, param.grad, **SUMS_TOL)
    error, torch_error = assert_same_error(lambda: getattr(internals.nn.utils, which)(ours),
                                           lambda: getattr(torch.nn.utils, which)(theirs))
    assert str(error) == str(torch_error)
    getattr(internals.nn.utils, f"remove_{which}")(ours)
    getattr(torch.nn.utils, f"remove_{which}")(theirs)
    assert_same_module(ours, theirs, ulps=PRODUCT_ULPS)
    error, torch_error = assert_same_error(lambda: getattr(internals.nn.utils, f"remove_{which}")(ours),
                                           lambda: getattr(torch.nn.utils, f"remove_{which}")(theirs))
    assert str(error) == str(torch_error)


def test_hook_based_spectral_norm_state_dict_both_ways():
    """torch's state dict (with its version metadata) loads into internals' layer, and back."""
    ours = internals.nn.utils.spectral_norm(linear(internals, seed=1))
    theirs = torch.nn.utils.spectral_norm(linear(torch, seed=2))
    theirs(torch.ones(1, 4))
    buffer = io.BytesIO()
    torch.save(theirs.state_dict(), buffer)
    buffer.seek(0)
    ours.load_state_dict(internals.load(buffer))
    assert_same_module(ours, theirs)
    fresh = torch.nn.utils.spectral_norm(linear(torch, seed=3))
    buffer = io.BytesIO()
    internals.save(ours.state_dict(), buffer)
    buffer.seek(0)
    fresh.load_state_dict(torch.load(buffer))
    assert_same_module(ours, fresh)
    assert ours.state_dict()._metadata[""]["spectral_norm"] == theirs.state_dict()._metadata[""]["spectral_norm"]


def test_repr_conversion_and_transfer():
    """The parametrized module prints as torch's, ``double()`` converts the originals, and
    ``transfer_parametrizations_and_params`` gives a plain module the same parametrization."""
    def program(lib):
        m = PZ(lib).weight_norm(linear(lib, n_in=3, n_out=2)).double()
        target = lib.nn.Linear(3, 2)
        P(lib).transfer_parametrizations_and_params(m, target)
        return m, target
    (ours, ours_target), (theirs, theirs_target) = both(program)
    assert repr(ours) == repr(theirs)
    # Norms taken in float32, then widened: a float32 ulp apart is millions of float64 ulps.
    assert_same_module(ours, theirs, **SUMS_TOL)
    assert_same_module(ours_target, theirs_target, **SUMS_TOL)
    assert ours_target.parametrizations.weight.original0 is ours.parametrizations.weight.original0
