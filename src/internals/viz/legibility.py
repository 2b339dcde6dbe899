"""How large a figure's text comes out on the book's page.

The book shows a notebook's matplotlib figure as the PNG its inline backend saved: drawn at the
figure's dpi, cut to a tight bounding box, then scaled down by the browser when it is wider than the
text column (784 px at the 1400 px window ``tests/book_pages.py`` reads the book in, which checks
that width). A 7-point label is 9.7 px in a figure shown at its own size, and 7 px in one 1,090 px
wide. ``page_text_sizes`` works that out for every visible text of a figure; ``watch`` is a
matplotlib figure hook (``figure.hooks``) that records each figure's text below ``SMALLEST_PX``
into the file named by ``INTERNALS_FIGURE_TEXT_LOG`` whenever the figure is drawn, which is how
``scripts/notebooks_alone.py`` checks every figure the chapters store.
"""
import os

import matplotlib.axes
import matplotlib.axis
import matplotlib.spines
import matplotlib.text

COLUMN_PX = 784      # widest image in the book's text column at a 1400 px window
SMALLEST_PX = 9.0    # the smallest text a figure may show on the page
LOG_VARIABLE = "INTERNALS_FIGURE_TEXT_LOG"


def page_text_sizes(fig, renderer=None):
    """[(size in page pixels, text)] for each text ``fig`` draws, at its dpi and on the page."""
    renderer = renderer or fig.canvas.get_renderer()
    width_px = fig.get_tightbbox(renderer).width * fig.dpi
    scale = min(1.0, COLUMN_PX / width_px) if width_px > 0 else 1.0
    return [(float(text.get_fontsize() * fig.dpi / 72 * scale), text.get_text()) for text in _drawn_texts(fig)]


def _drawn_texts(artist):
    """The non-empty texts under ``artist`` that a draw shows: visible, and not on a switched-off axis."""
    if not artist.get_visible():
        return
    if isinstance(artist, matplotlib.text.Text):
        if artist.get_text().strip():
            yield artist
        return
    children = artist.get_children()
    if isinstance(artist, matplotlib.axes.Axes) and not artist.axison:
        # ax.axis("off") keeps the axes' tick labels and spines, and skips drawing them
        children = [c for c in children if not isinstance(c, (matplotlib.axis.Axis, matplotlib.spines.Spine))]
    for child in children:
        yield from _drawn_texts(child)


def too_small(fig, renderer=None):
    """The texts of ``fig`` that come out below ``SMALLEST_PX`` on the page, smallest first."""
    return sorted((size, label) for size, label in page_text_sizes(fig, renderer) if size < SMALLEST_PX)


def watch(fig):
    """A ``figure.hooks`` entry: after each draw, append ``fig``'s too-small texts to the log file,
    each line once per figure (a ``bbox_inches="tight"`` save draws a figure twice)."""
    path = os.environ.get(LOG_VARIABLE)
    if not path:
        return
    logged = set()

    def record(event):
        small = too_small(fig, event.renderer)
        if small:
            title = fig.get_suptitle() or next(
                (ax.get_title() for ax in fig.axes if ax.get_title()), "an untitled figure")
            lines = [f"{title!r}: {label!r} is {size:.1f} px\n" for size, label in small]
            new = [line for line in dict.fromkeys(lines) if line not in logged]
            if new:
                logged.update(new)
                with open(path, "a", encoding="utf-8") as log:
                    log.writelines(new)

    fig.canvas.mpl_connect("draw_event", record)
