"""``torch.func.functional_call`` and the deprecated ``torch.nn.utils.stateless.functional_call``
against torch: the module runs on the tensors passed in (one dictionary or several, nested names,
buffers, tied weights), gradients reach those tensors, and the module holds its own tensors again
afterwards, also when the forward raises; bad keys raise torch's class with torch's message."""
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_tree, outcome

import internals


def _net(lib):
    """Two linear layers around a batch norm, the second layer's weight tied to a plain attribute
    name as well (``head``), so a tensor has two names."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2), lib.nn.Linear(2, 2, bias=False))
    net.head = net[2]
    return net


def _values(x):
    """The values, detached: compared within ulps of torch's, since the products and the batch
    norm's variance sum in another order on each CPU (the facts compared here are which tensors
    were used, not the last bits)."""
    return None if x is None else x.detach()


# The batch norm subtracts a mean of four rows and divides by their spread, so a value near zero
# carries the rounding of values near one (the first layer's gradients are all such values: their
# exact sum over the batch is zero). Each tensor is compared within 64 ulps of the larger of one
# and its largest element.
NET_ULPS = 64


def _close(ours, theirs):
    largest = max(1.0, theirs.abs().max().item() if theirs.numel() else 0.0)
    assert_same(ours, theirs, rtol=0, atol=NET_ULPS * torch.finfo(theirs.dtype).eps * largest)


def assert_same_outcome(program):
    """``program`` gives torch's result (tensors close, as ``_close`` says) or raises torch's error."""
    assert_same_tree(outcome(program, internals), outcome(program, torch), _close)


def _inputs(lib):
    return lib.arange(12.0).reshape(4, 3) / 10


def _swapped_in(lib, params_and_buffers, **kw):
    """What the call returns, what the passed tensors' grads are, and whether the module still
    holds its own parameters and buffers (the very objects) afterwards."""
    net = _net(lib)
    own = {k: v for k, v in [*net.named_parameters(remove_duplicate=False), *net.named_buffers(remove_duplicate=False)]}
    given = params_and_buffers(lib)
    out = lib.func.functional_call(net, given, _inputs(lib), **kw)
    out.sum().backward()
    flat = given if isinstance(given, dict) else {k: v for d in given for k, v in d.items()}
    after = dict([*net.named_parameters(remove_duplicate=False), *net.named_buffers(remove_duplicate=False)])
    return (_values(out), {k: _values(v.grad) for k, v in sorted(flat.items())},
            {k: after[k] is v for k, v in own.items()}, sorted(type(v).__name__ for v in after.values()),
            {k: _values(v) for k, v in sorted(flat.items()) if "running" in k})


def _weights(lib):
    return {"0.weight": lib.full((2, 3), 0.5, requires_grad=True), "2.weight": lib.eye(2, requires_grad=True)}


def _buffers(lib):
    return {"1.running_mean": lib.ones(2), "1.running_var": lib.full((2,), 2.0)}


CASES = {
    "one_dict": _weights,
    "params_and_buffers_as_a_tuple": lambda lib: (_weights(lib), _buffers(lib)),
    "a_list_of_dicts": lambda lib: [_weights(lib), {"1.bias": lib.zeros(2, requires_grad=True)}],
    "tied_name_given": lambda lib: {"head.weight": lib.eye(2, requires_grad=True)},
}


@pytest.mark.parametrize("case", CASES)
def test_the_module_runs_on_the_tensors_passed_and_gets_its_own_back(case):
    assert_same_outcome(lambda lib: _swapped_in(lib, CASES[case]))


def test_eval_mode_reads_the_buffers_passed():
    def program(lib):
        net = _net(lib).eval()
        return _values(lib.func.functional_call(net, _buffers(lib), (_inputs(lib),)))
    assert_same_outcome(program)


def _calls(lib, given, **kw):
    return _values(lib.func.functional_call(_net(lib).eval(), given(lib), _inputs(lib), **kw))


BAD = {
    "tied_names_given_two_values": (lambda lib: {"2.weight": lib.eye(2), "head.weight": lib.ones(2, 2)}, {}),
    "two_values_untied": (lambda lib: {"2.weight": lib.eye(2), "head.weight": lib.ones(2, 2)},
                          {"tie_weights": False}),
    "strict_with_missing_and_unexpected": (lambda lib: {"0.weight": lib.eye(2, 3), "nope": lib.ones(1)},
                                           {"strict": True}),
    "strict_with_all_keys": (lambda lib: dict(_net(lib).state_dict(keep_vars=True)), {"strict": True}),
    "not_a_tensor": (lambda lib: {"0.weight": 3.0}, {}),
    "a_key_in_two_dicts": (lambda lib: ({"0.bias": lib.ones(2)}, {"0.bias": lib.ones(2)}), {}),
    "a_tuple_holding_a_list": (lambda lib: ({"0.bias": lib.ones(2)}, [1]), {}),
    "neither_dict_nor_sequence": (lambda lib: 5, {}),
    "wrong_shape_raises_in_forward": (lambda lib: {"0.weight": lib.ones(2, 5)}, {}),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_keys_and_values_raise_torchs_error(case):
    given, kw = BAD[case]

    def program(lib):
        return _calls(lib, given, **kw)
    assert_same_outcome(program)


def test_a_raising_forward_leaves_the_modules_own_tensors():
    def program(lib):
        net = _net(lib)
        own = dict(net.named_parameters(remove_duplicate=False))
        with pytest.raises(RuntimeError):
            lib.func.functional_call(net, {"0.weight": lib.ones(2, 5), "1.bias": lib.ones(2)}, _inputs(lib))
        return all(dict(net.named_parameters(remove_duplicate=False))[k] is v for k, v in own.items())
    assert program(internals) is program(torch) is True


class _Counter:
    """A module whose forward replaces its buffer (``self.count = self.count + 1``) and takes a
    keyword argument: the replaced buffer comes back in the dictionary passed, not on the module."""

    @staticmethod
    def make(lib):
        class Counter(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", lib.zeros(()))

            def forward(self, x, *, scale=1.0):
                self.count = self.count + 1
                return x * scale + self.count
        return Counter()


def test_a_replaced_buffer_comes_back_in_the_dict_and_kwargs_reach_forward():
    def program(lib):
        module, given = _Counter.make(lib), {"count": lib.full((), 5.0)}
        out = lib.func.functional_call(module, given, lib.ones(2), {"scale": 3.0})
        return _values(out), _values(given["count"]), _values(module.count)
    assert_same_outcome(program)


def test_the_deprecated_stateless_call_warns_and_does_the_same():
    facts = []
    for lib in (internals, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.utils.stateless.functional_call(_net(lib).eval(), _buffers(lib), _inputs(lib))
        facts.append((_values(out), [(w.category, str(w.message), w.filename) for w in caught]))
    assert_same_tree(*facts, _close)
    assert facts[0][1][0][2] == __file__       # the warning names the caller's line, as torch's
