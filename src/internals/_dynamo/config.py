"""Settings of ``internals.compile`` (``torch/_dynamo/config.py``)."""

# How many graphs one compiled function may trace; past it every call that misses the cache
# runs eagerly (torch's default is the same, 8).
recompile_limit = 8
