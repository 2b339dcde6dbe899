"""``torch.utils.deterministic``: whether deterministic mode fills the memory ``empty`` hands out."""
import sys
import types

from ..aten.context import global_context


class _Deterministic(types.ModuleType):
    """The module's class: ``fill_uninitialized_memory`` is a property over ATen's flag."""

    @property
    def fill_uninitialized_memory(self):
        """Whether ``empty`` and its kin fill new memory while deterministic algorithms are on."""
        return global_context().deterministic_fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if type(mode) is not bool:
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        global_context().deterministic_fill_uninitialized_memory = mode


sys.modules[__name__].__class__ = _Deterministic
