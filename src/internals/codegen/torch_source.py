"""Reading PyTorch's own files from the installed wheel, at run time (chapter 8's tour).

The wheel ships some of the source it was built from: torchgen carries
``native_functions.yaml`` and ``derivatives.yaml``, and ``torch/include`` the C++ headers. These
helpers find a file, cut one entry or declaration out of it, and build a link to the same file
on GitHub at the commit the wheel was built from. Nothing is copied into this repository.
"""
import importlib.util
import re
from pathlib import Path

__all__ = ["SOURCES", "installed", "source_url", "yaml_entry", "native_function", "derivative",
           "tensor_impl_fields", "dispatch_keys"]

# installed path (relative to site-packages) -> the same file in the pytorch/pytorch repository
SOURCES = {
    "torchgen/packaged/ATen/native/native_functions.yaml": "aten/src/ATen/native/native_functions.yaml",
    "torchgen/packaged/autograd/derivatives.yaml": "tools/autograd/derivatives.yaml",
    "torch/include/c10/core/TensorImpl.h": "c10/core/TensorImpl.h",
    "torch/include/c10/core/DispatchKey.h": "c10/core/DispatchKey.h",
}


def installed(path):
    """The file ``path`` (``torch/...`` or ``torchgen/...``) in the installed wheel."""
    package = path.split("/")[0]
    root = Path(importlib.util.find_spec(package).origin).parent
    return root.joinpath(*path.split("/")[1:])


def source_url(repo_path):
    """A link to ``repo_path`` at the commit of the installed torch (``torch.version.git_version``)."""
    import torch.version  # torch is heavy: imported when a link is first made, not with the package
    return f"https://github.com/pytorch/pytorch/blob/{torch.version.git_version}/{repo_path}"


def yaml_entry(path, key, name):
    """The text of the entry ``- <key>: <name>(...`` of a YAML list, up to the next entry."""
    lines = installed(path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"- {key}: {name}("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("- ") or not lines[i].strip()),
               len(lines))
    return "\n".join(lines[start:end])


def native_function(name):
    """``add.Tensor``'s entry in torch's native_functions.yaml."""
    return yaml_entry("torchgen/packaged/ATen/native/native_functions.yaml", "func", name)


def derivative(name):
    """``add.Tensor``'s entry in torch's derivatives.yaml."""
    return yaml_entry("torchgen/packaged/autograd/derivatives.yaml", "name", name)


_MEMBER = re.compile(r"^  ([A-Za-z_][\w:<>, ]*?) (\w+_)(?: = [^;]+| : 1)?;$")


def tensor_impl_fields():
    """``(type, name)`` of each data member declared in ``struct TensorImpl`` (TensorImpl.h)."""
    lines = installed("torch/include/c10/core/TensorImpl.h").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("struct C10_API TensorImpl"))
    end = next(i for i in range(start, len(lines)) if lines[i] == "};")
    return [m.groups() for m in map(_MEMBER.match, lines[start:end]) if m]


def dispatch_keys():
    """The names in ``enum class DispatchKey``, in declaration order (DispatchKey.h). The
    per-backend keys (CPU, CUDA, SparseCPU, AutogradCPU, ...) are made by macros from the
    functionality keys (Dense, Sparse, AutogradFunctionality, ...) and do not appear by name."""
    text = installed("torch/include/c10/core/DispatchKey.h").read_text()
    body = text[text.index("enum class DispatchKey :"):]
    body = body[:body.index("\n};")]
    return [m.group(1) for m in re.finditer(r"^  (\w+)\s*(?:,|=)", body, re.M)]
