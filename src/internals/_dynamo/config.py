"""Settings of ``internals.compile`` (``torch/_dynamo/config.py``)."""

# How many graphs one compiled function may trace; past it every call that misses the cache
# runs eagerly (torch's default is the same, 8).
recompile_limit = 8

# Automatic dynamic shapes (``pgo.py``): a recompile caused by a size that changed traces that
# dim as a symbol. Off, every new size is a static graph of its own, until the limit.
automatic_dynamic_shapes = True

# A dim is static until a recompile (or ``mark_dynamic``) says otherwise; False traces every dim
# as a symbol from the first call, as ``compile(dynamic=True)`` does.
assume_static_by_default = True
