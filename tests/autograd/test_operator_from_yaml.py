"""An operator added at run time from YAML snippets (``internals.codegen.operator_from_yaml``),
against torch's operator of the same schema: the node torch's build generates, what it saves,
the out= overload's refusal under autograd, and an undo that leaves the dispatcher as it was."""
import pytest
import torch

import internals
from internals.codegen.operator_from_yaml import register_operator
from internals.exercises.codebase import DIST, ENTR, KERNELS, LDEXP, dispatch_table


@pytest.fixture
def ldexp():
    before = dispatch_table()
    handle = register_operator(*LDEXP, KERNELS)
    yield handle
    handle.undo()
    assert dispatch_table() == before


def test_the_node_saves_what_torchs_node_saves(ldexp):
    a, b = torch.randn(2, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    x, y = (internals.from_torch(t.detach()).requires_grad_() for t in (a, b))
    ours, theirs = internals.ops.aten.ldexp.Tensor(x, y), torch.ops.aten.ldexp.Tensor(a, b)
    saved = [n for n in dir(theirs.grad_fn) if n.startswith("_saved_")]
    assert saved == [n for n in dir(ours.grad_fn) if n.startswith("_saved_")] == ["_saved_other", "_saved_result"]
    internals.testing.check(ours.grad_fn._saved_result.detach(), theirs.grad_fn._saved_result.detach())
    assert ldexp.nodes["LdexpBackward0"] is type(ours.grad_fn)


def test_a_default_argument_reaches_the_kernel_and_the_node():
    handle = register_operator(*DIST, KERNELS)
    try:
        a, b = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
        x, y = (internals.from_torch(t.detach()).requires_grad_() for t in (a, b))
        ours, theirs = internals.ops.aten.dist.default(x, y), torch.ops.aten.dist.default(a, b)
        assert ours.grad_fn._saved_p == theirs.grad_fn._saved_p == 2
        torch.testing.assert_close(ours.to_torch(), theirs)
    finally:
        handle.undo()


def test_out_refuses_inputs_that_require_grad_with_torchs_message():
    handle = register_operator(*ENTR, KERNELS)
    try:
        t = torch.rand(3, requires_grad=True)
        with pytest.raises(RuntimeError) as theirs:
            torch.ops.aten.special_entr.out(t, out=torch.empty(3))
        with pytest.raises(RuntimeError) as ours:
            internals.ops.aten.special_entr.out(internals.from_torch(t.detach()).requires_grad_(),
                                                out=internals.empty(3))
        assert str(ours.value) == str(theirs.value)
    finally:
        handle.undo()


def test_a_kernel_the_yaml_names_but_nobody_gave_leaves_no_trace():
    before = dispatch_table()
    with pytest.raises(KeyError, match="special_entr_out"):
        register_operator(ENTR[0], ENTR[1], {"special_entr": KERNELS["special_entr"]})
    assert dispatch_table() == before


def test_an_entry_without_dispatch_is_a_composite_and_records_its_inner_operators():
    native = "- func: ldexp.Tensor(Tensor self, Tensor other) -> Tensor\n"
    handle = register_operator(native, "[]", {"ldexp": KERNELS["ldexp"]})
    try:
        op = internals.aten.dispatcher.find("ldexp.Tensor")
        assert list(op.kernels) == ["CompositeImplicitAutograd"]
        y = internals.ops.aten.ldexp.Tensor(internals.ones(2, requires_grad=True), internals.ones(2))
        assert y.grad_fn.name() == "MulBackward0"      # the kernel's own mul, recorded by autograd
    finally:
        handle.undo()


def test_undo_is_idempotent_and_spares_a_later_registration():
    first = register_operator(*LDEXP, KERNELS)
    first.undo()
    second = register_operator(*LDEXP, KERNELS)
    first.undo()
    assert internals.ops.aten.ldexp.Tensor(internals.ones(1, requires_grad=True), internals.ones(1)).grad_fn
    second.undo()
    second.undo()
    assert not hasattr(internals.ops.aten, "ldexp")
