"""A build cache for the PTX that ``test_every_cuda_kernel_compiles_to_ptx`` makes, kept beside Numba's
kernel cache.

NVVM compiling every CUDA kernel for every argument type it is checked with costs a minute and a
half of CPU, and between two runs of the suite the kernels rarely change. The PTX a kernel compiles
to is fixed by what goes into the compilation, so that is what the cache is keyed by:

* the sources: every ``.py`` file of the package (the CUDA kernels, the scalar functions and the
  offset helper they call, and whatever they import from elsewhere in the package), and what
  ``_cuda_env._kernel_sources_hash`` adds to those of ``aten/native``: Numba's version and every
  ``NUMBA_*`` setting that changes generated code;
* the compilers: the numba-cuda and llvmlite versions, NVVM's version and IR version, the CUDA
  runtime's version, and the libNVVM file itself (path, size, modification time);
* the target: the compute capability;
* the compiling program's own text (which kernels, which closures, which argument types), and per
  kernel its label and its signature.

An edited kernel therefore always compiles again (``test_a_changed_kernel_source_misses_the_ptx_cache``
checks that), and only successful compilations are stored: a failure compiles, and fails, again.
The checks on the PTX (an ``.entry``, shared memory, barriers) read it whether it was compiled now
or read back. No torch import here: the compiling process stays light.
"""
import hashlib
import os
from importlib.metadata import version
from pathlib import Path


def _libnvvm():
    """Where Numba finds libNVVM, with the file's size and modification time ('' when not found)."""
    from numba.cuda.cudadrv import libs
    path = libs.get_cuda_paths()["nvvm"].info
    if not path or not os.path.exists(path):
        return ""
    stat = os.stat(path)
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


def package_sources_hash(package=None):
    """A hash of every ``.py`` file under the package directory, names and contents."""
    import internals
    package = Path(package or Path(internals.__file__).parent)
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(f"{path.relative_to(package)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def toolchain():
    """The compilers, described (run in a process compiling for real, not under the simulator)."""
    from numba import cuda
    from numba.cuda.cudadrv import nvvm
    compiler = nvvm.NVVM()
    return "\0".join([version("numba-cuda"), version("llvmlite"), repr(compiler.get_version()),
                      repr(compiler.get_ir_version()), repr(cuda.runtime.get_version()), _libnvvm()])


def compiler_key(cc, program, toolchain, package=None):
    """A hash of everything but the kernel's own label and signature (see the module docstring)."""
    from internals import _cuda_env
    parts = [package_sources_hash(package), _cuda_env._kernel_sources_hash(), toolchain, repr(tuple(cc)), program]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def kernel_key(label, signature):
    return hashlib.sha256(f"{label}\0{signature!r}".encode()).hexdigest()[:24]


class PTXCache:
    """PTX files under ``<NUMBA_CACHE_DIR>/ptx/<compiler key>/``, one per kernel and signature."""

    def __init__(self, cc, program, toolchain, root=None, package=None):
        root = Path(root or os.environ["NUMBA_CACHE_DIR"])
        self.directory = root / "ptx" / compiler_key(cc, program, toolchain, package)
        self.hits = 0

    def path(self, label, signature):
        return self.directory / f"{kernel_key(label, signature)}.ptx"

    def compile(self, label, signature, compile_ptx):
        """The PTX for ``label`` at ``signature``: read back, or ``compile_ptx()`` and stored."""
        path = self.path(label, signature)
        if path.exists():
            self.hits += 1
            return path.read_text()
        ptx = compile_ptx()
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")      # another process may write it too
        partial.write_text(ptx)
        os.replace(partial, path)
        return ptx
