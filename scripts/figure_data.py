"""Write the live figures' data into the book: what each figure starts from, computed by `internals`.

Run by the Makefile before the book build. Writes ``book/_static/figures/data.js`` (not committed:
it is regenerated on every build), a plain script that sets ``window.LiveFigureData``, so a page
opened from disk can read it (a browser refuses to fetch JSON from file:// pages).
"""
import argparse
from pathlib import Path

from internals.viz.live import data_script, figure_data

OUT = Path(__file__).resolve().parent.parent / "book" / "_static" / "figures" / "data.js"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(data_script(figure_data()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
