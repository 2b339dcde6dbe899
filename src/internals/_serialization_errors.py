"""The errors ``torch.load`` raises for damaged or unsafe checkpoints, worded as torch words them
(``torch/serialization.py``, ``torch/_weights_only_unpickler.py`` and the zip reader in
``caffe2/serialize/inline_container.cc``), so a caller's ``except`` clause and message checks work
the same with either library."""
import _compat_pickle
import pickle
import re

__all__ = ["reader_error", "weights_only_error", "unsupported_global", "refused_global", "record_size_error"]

# torch's advice when a global is refused; quoted because callers match on it
_UNSAFE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
           "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
           "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
           "trusted source.")
_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
         "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
# the zip reader appends this to every error it reports
_CORRUPT = (" This is an internal miniz error. If you are seeing this error, there is a high likelihood that "
            "your checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
            "transferred incorrectly, or the file was modified after saving.")


def reader_error(what):
    """torch's zip reader failing: ``what`` is e.g. 'failed finding central directory'."""
    return RuntimeError(f"PytorchStreamReader {what}.{_CORRUPT}")


def unsupported_global(module, name):
    """The weights-only unpickler's words for a global outside its allow-list."""
    module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)      # Python 2's names, as torch reads them
    path = name if module == "builtins" else f"{module}.{name}"
    return (f"Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{path}])` or the `torch.serialization.safe_globals([{path}])` "
            "context manager to allowlist this global if you trust this class/function.")


def weights_only_error(message):
    """An unpickling error as ``torch.load`` re-raises it: framed by advice on weights_only. An
    unknown opcode is named as torch's own unpickler names it, by its number."""
    unknown = re.fullmatch(r"invalid load key, '(.+)'\.", message)
    if unknown:
        key = unknown.group(1)
        message = f"Unsupported operand {int(key[2:], 16) if key.startswith(chr(92) + 'x') else ord(key)}"
    if "was not an allowed global by default" in message:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
                "recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    else:
        text = (f"Weights only load failed. {_UNSAFE}\nPlease file an issue with the following so that we can "
                "make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n" + message)
    return pickle.UnpicklingError(text + _DOCS)


def refused_global(module, name):
    """A global outside the allow-list, refused: torch's whole message, then one line naming the
    global in the words internals used before it matched torch (callers match on either)."""
    error = weights_only_error(unsupported_global(module, name))
    return pickle.UnpicklingError(f"{error}\ninternals.load: unsupported global {module}.{name}")


def record_size_error(actual, expected):
    """A ``data/<key>`` record whose length is not the byte count its pickle promised."""
    return RuntimeError(f"record size ({actual} bytes) does not match expected size ({expected} bytes = "
                        f"{expected} elements * 1 bytes/element) for dtype Byte")
