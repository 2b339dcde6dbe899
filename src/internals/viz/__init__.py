"""Pictures of what the package's data structures hold, for the course's chapters.

``stride_map`` draws a strided view over its storage (chapter 2). The tensor core never imports
this package: it needs matplotlib, which nothing else in ``internals`` does.
"""
from .strides import stride_map

__all__ = ["stride_map"]
