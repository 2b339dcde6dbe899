"""Pictures of what the package's data structures hold, for the course's chapters.

``stride_map`` draws a strided view over its storage (chapter 2); ``ownership_map`` who refers
to whom from a Python tensor down to its bytes (chapter 3); ``segment_map`` and
``segment_timeline`` draw the CUDA caching allocator's segments and blocks, ``memory_timeline``
its recorded history (chapter 7);
``tile_map`` draws the tiles one block of the tiled CUDA matmul loads (chapter 4); ``graph_map``
draws an autograd graph, torch's or internals' (chapter 6); ``key_set_map`` draws how one call's
key set is made and which key wins (chapter 5); ``call_path_map`` draws the layers one call
crossed, from ``trace_call`` (chapter 8). ``internals.viz.live`` holds the figures that run in
the reader's browser (``live.show("strides")``) and the data the book gives them. The tensor core
never imports this package: it needs matplotlib, which nothing else in ``internals`` does.
"""
from .call_path import call_path_map, trace_call
from .dispatch import call_key_sets, compare_tables, keep_columns, key_set_map, native_stderr_silenced, wrapper_answers
from .graph import graph_layout, graph_map
from .kernels import tile_map, tile_steps
from .memory import active_allocations, memory_timeline, segment_map, segment_timeline
from .ownership import ownership_layout, ownership_map
from .strides import stride_map

__all__ = ["call_path_map", "trace_call", "call_key_sets", "compare_tables", "keep_columns", "key_set_map",
           "native_stderr_silenced", "wrapper_answers", "graph_layout", "graph_map", "stride_map", "segment_map",
           "segment_timeline", "active_allocations", "memory_timeline", "tile_map", "tile_steps", "ownership_layout",
           "ownership_map"]
