"""Ahead-of-time autograd: a differentiable function traced and compiled forward and backward
(``torch/_functorch``)."""
from .aot_autograd import AOTCompiled, aot_function, trace_joint
from .partitioners import default_partition

__all__ = ["AOTCompiled", "aot_function", "default_partition", "trace_joint"]
