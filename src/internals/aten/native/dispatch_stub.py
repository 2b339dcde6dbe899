"""DispatchStub: one op implementation, a loop per device (``aten/src/ATen/native/DispatchStub.h``).

An ATen native function registered for both CPU and CUDA calls e.g. ``add_stub(device, iter)``,
which jumps to the loop compiled for that device. ``loops(device)`` is that jump.
"""
import functools
import importlib


def loops(device, family="loops", package="internals.aten.native"):
    """The module of ``family`` loops ("loops", "reduce", "linalg") for ``device``, in ``package``'s
    ``cpu`` or ``cuda`` folder (``internals.aten.native.sparse`` has its own)."""
    return _module(package, "cpu" if device.type == "cpu" else "cuda", family)


@functools.cache                # a stub is a table lookup in ATen too: every op call comes here
def _module(package, backend, family):
    return importlib.import_module(f"{package}.{backend}.{family}")
