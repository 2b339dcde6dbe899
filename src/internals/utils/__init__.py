"""Utilities (``torch/utils``): Python dispatch and pytree helpers, module backward hooks."""
