"""Write the names and types of torch Inductor's settings (``torch._inductor.config``) into
``src/internals/data/inductor_options.json``, the table ``internals.compile(options=...)``
checks its options against without importing torch.

Run it again after installing another torch: ``python scripts/inductor_options.py``.
``tests/compile/test_compile_options.py`` fails while the file and the installed torch disagree.
"""
import argparse
import json
import typing
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "internals" / "data" / "inductor_options.json"


def option_types():
    """[name, checked type, default's type] per setting, in torch's order. The checked type is
    what ``apply_options`` passes to ``isinstance``: a builtin's name; None for a generic type
    (``list[str]``, ``int | None``, a ``Literal``), which torch does not check; or, for an
    annotation left as a string, ``{"annotation": text}`` (``isinstance`` refuses it)."""
    import torch
    from torch._inductor import config

    rows = []
    for name, default in config.get_config_copy().items():
        kind = config.get_type(name)
        if typing.get_origin(kind) is not None:
            checked = None
        elif isinstance(kind, type):
            if kind.__module__ != "builtins":
                raise ValueError(f"{name}: type {kind!r} is not a builtin; teach internals._inductor.config it")
            checked = kind.__name__
        else:
            checked = {"annotation": str(kind)}
        rows.append([name, checked, type(default).__name__])
    return {"torch_version": torch.__version__, "options": rows}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    table = option_types()
    rows = ",\n".join(json.dumps(row) for row in table["options"])      # one setting per line
    args.out.write_text(f'{{"torch_version": {json.dumps(table["torch_version"])},\n"options": [\n{rows}\n]}}\n')
    print(f"wrote {len(table['options'])} options of torch {table['torch_version']} to {args.out}")


if __name__ == "__main__":
    main()
