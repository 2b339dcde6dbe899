"""``torch.functional``: the namespace functions torch writes in Python. They are the same objects
as ``internals.norm`` and the others; a mode or ``resolve_name`` names them from here, as torch
names ``torch.norm`` ``torch.functional.norm``."""
from ._functional import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    meshgrid,
    norm,
    split,
    tensordot,
    unique,
    unique_consecutive,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "norm", "meshgrid", "split", "tensordot", "unique",
           "unique_consecutive"]
