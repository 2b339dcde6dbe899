"""``one_hot`` (``aten/src/ATen/native/Onehot.cpp``): CompositeImplicitAutograd, zeros with a 1
scattered at each index along a new last dim of ``num_classes`` (-1: the largest index + 1)."""
from ...c10 import scalar_type as st
from ...c10.dispatch_key import DispatchKey
from ...c10.local_dispatch_key_set import tls
from ...c10.tensor_impl import strided
from ..dispatcher import call


def one_hot(x, num_classes=-1):
    if x.dtype is not st.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    shape = list(x.shape)
    if x.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return call("empty.memory_format", [*shape, num_classes], dtype=x.dtype, device=x.device)
    if (x._impl.device.type == "meta" or DispatchKey.Python in tls.included) and num_classes != -1:
        # torch's traceable form on meta tensors and under a Python mode (a fake tensor's trace):
        # a comparison with every class, no value read or checked
        classes = call("arange", num_classes, dtype=st.int64, layout=strided, device=x.device)
        return call("_to_copy", call("eq.Tensor", call("unsqueeze", x, -1), classes), dtype=st.int64)
    if call("min", x).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = call("max", x).item()
    if num_classes == -1:
        num_classes = largest + 1
    elif num_classes <= largest:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = call("zeros", [*shape, num_classes], dtype=x.dtype, device=x.device)
    return call("scatter_.value", out, -1, call("unsqueeze", x, -1), 1)
