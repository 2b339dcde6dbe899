"""CPU kernels: Numba loops (``aten/src/ATen/native/cpu``), the parallel ones compiled twice by
``parallel_for.parallel_loop``: for the thread pool and for the calling thread."""
