"""One road through the layers: a tracer following ``a + b`` and ``x.sum(0)`` sees each call go
down (frontend -> autograd -> kernel -> TensorIterator -> loop), never back up, and no frontend
code below the dispatcher. The dispatcher routes between layers (a redispatch is not a step up),
and c10 and ``TensorBase`` are below every layer, so calls into them are always down."""
import sys

import pytest

import internals

LAYERS = ("frontend", "autograd", "kernel", "tensor_iterator", "loop", "core")


def layer(code):
    """The layer a Python frame belongs to, by its module; None for the dispatcher (a router)
    and for code outside the package."""
    path = code.co_filename.replace("\\", "/")
    if "src/internals/" not in path and "/internals/" not in path:
        return None
    module = path.split("internals/", 1)[1]
    if module == "aten/dispatcher.py":
        return None
    if module.startswith(("_python_arg_parser", "_generated/", "_tensor.py", "_functional")):
        return "frontend"
    if module.startswith("autograd/"):
        return "autograd"
    if module.startswith(("aten/native/cpu/", "aten/native/cuda/", "aten/native/dispatch_stub")):
        return "loop"
    if module.startswith("aten/native/"):
        # the loop a kernel hands ``for_each`` is a lambda of the kernel's module: it is the loop
        return "loop" if code.co_name == "<lambda>" else "kernel"
    if module in ("aten/tensor_iterator.py", "aten/empty_tensor.py"):
        return "tensor_iterator"
    return "core"      # c10, _tensor_base: below everything


def upward_calls(program):
    """(caller, callee) pairs of every call that goes up a layer while ``program`` runs."""
    def on_call(frame, found):
        callee, caller = layer(frame.f_code), layer(frame.f_back.f_code)
        if callee and caller and LAYERS.index(callee) < LAYERS.index(caller):
            found.append((f"{caller}: {frame.f_back.f_code.co_name}", f"{callee}: {frame.f_code.co_name}"))
    return calls_seen(program, on_call)


def calls_seen(program, on_call):
    """What ``on_call(frame, found)`` puts in ``found`` for every Python call ``program`` makes."""
    found = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None:
            on_call(frame, found)

    sys.setprofile(profile)
    try:
        program()
    finally:
        sys.setprofile(None)
    return found


a, b = internals.ones(2, 3), internals.ones(2, 3)
PROGRAMS = {
    "a + b": lambda: a + b,
    "x.sum(0)": lambda: a.sum(0),
    "a.t() + b.t() (not the fast path)": lambda: a.t() + b.t(),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_calls_only_go_down(name):
    PROGRAMS[name]()          # compiled first: the tracer follows a warm call
    assert upward_calls(PROGRAMS[name]) == []


def parser_entries_below_the_dispatcher(program):
    """(caller, callee) of each call from a kernel, TensorIterator or loop into the frontend's
    argument parsing (the generated bindings, ``_python_arg_parser``): a composite kernel calls
    the operators it needs through the dispatcher, as an ``at::`` call in C++ does."""
    def on_call(frame, found):
        path = frame.f_code.co_filename.replace("\\", "/")
        if "internals/_generated/" in path or "internals/_python_arg_parser" in path:
            caller = frame.f_back.f_code
            if layer(caller) in ("kernel", "tensor_iterator", "loop"):
                found.append((f"{layer(caller)}: {caller.co_name}", frame.f_code.co_name))
    return calls_seen(program, on_call)


F = internals.nn.functional
x, target = internals.randn(3, 4, generator=internals.Generator().manual_seed(0)), internals.tensor([1, 0, 3])
image, kernel, bias = (internals.randn(*size, generator=internals.Generator().manual_seed(1))
                      for size in ((1, 2, 5, 5), (3, 2, 2, 2), (3,)))
image_grad = image.clone().requires_grad_()
sparse = internals.sparse_coo_tensor(internals.tensor([[0, 2, 0], [1, 0, 1]]), internals.tensor([1., 2., 3.]), (3, 2))
COMPOSITES = {
    "var": lambda: x.var(1),
    "std": lambda: x.std(),
    "var_mean": lambda: internals.var_mean(x, 1),
    "logsumexp": lambda: x.logsumexp(1),
    "vector norm": lambda: x.norm(),
    "sort": lambda: x.sort(1),
    "topk": lambda: x.topk(2),
    "median": lambda: x.median(),
    "cumsum": lambda: x.cumsum(0),
    "softmax": lambda: x.softmax(1),
    "layer_norm": lambda: F.layer_norm(x, (4,)),
    "batch_norm": lambda: F.batch_norm(x, internals.zeros(4), internals.ones(4), training=True),
    "cross_entropy": lambda: F.cross_entropy(x, target),
    "conv2d": lambda: F.conv2d(image, kernel, bias, padding="same"),
    "conv2d backward": lambda: F.conv2d(image_grad, kernel, bias, stride=2).sum().backward(),
    "multinomial": lambda: internals.multinomial(x.softmax(1), 2),
    "dropout": lambda: F.dropout(x, 0.5),
    "sparse add and to_dense": lambda: (sparse + sparse).to_dense(),
    "dense @ sparse": lambda: internals.mm(x.t(), sparse),
}


def test_the_tracer_sees_a_frontend_call():
    """A kernel calling a Tensor method (compiled here as code of a kernel module) is caught."""
    scope = {}
    exec(compile("def frontend_kernel(t):\n    return t.ne(0).sum()\n",  # noqa: S102 -- a fake kernel
                 "src/internals/aten/native/fake_kernel.py", "exec"), scope)
    assert parser_entries_below_the_dispatcher(lambda: scope["frontend_kernel"](x)) == [
        ("kernel: frontend_kernel", "THPVariable_ne"), ("kernel: frontend_kernel", "THPVariable_sum")]


@pytest.mark.filterwarnings("ignore:Using padding='same'")     # conv2d's even kernel pads the input first
@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_kernels_call_operators_through_the_dispatcher(name):
    COMPOSITES[name]()
    assert parser_entries_below_the_dispatcher(COMPOSITES[name]) == []
