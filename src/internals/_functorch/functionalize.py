"""``torch.func.functionalize`` (``torch/_functorch/eager_transforms.py``): a function whose
in-place writes are rewritten out of place.

Torch wraps each tensor in a FunctionalTensorWrapper while the function runs. Here the function
is traced to a graph of aten operators (``make_fx``), the compile layer's functionalization pass
rewrites the graph (``fx/passes/functionalize.py``: writes become their out-of-place twins,
views are replayed from their bases, writes to inputs are copied back at the end), and the
rewritten graph runs on the arguments. So ``make_fx(functionalize(f))`` shows the graph without
writes, and calling it gives ``f``'s results and ``f``'s effect on its inputs.
"""
import functools

from ..fx.experimental.proxy_tensor import make_fx
from ..fx.passes.functionalize import functionalize as functionalize_graph

__all__ = ["functionalize"]


def functionalize(func, *, remove="mutations"):
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           f"removed from the program, and replaced with their out-of-place equivalents.\n     "
                           f"remove='mutations_and_views': In addition to the above, all aliasing operators "
                           f"{{view}} will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")
    if remove == "mutations_and_views":
        raise NotImplementedError("functionalize(f, remove='mutations_and_views'): the *_copy rewrite of views is "
                                  "not in the package; remove='mutations' is")

    @functools.wraps(func)
    def wrapper(*args):
        gm = make_fx(func, tracing_mode="fake")(*args)     # a real trace would run the writes twice
        functionalize_graph(gm)
        gm.graph.eliminate_dead_code()
        gm.recompile()
        return gm(*args)

    return wrapper
