"""internals.viz.legibility: the size a figure's text comes out at on the book's page, and the
figure hook scripts/notebooks_alone.py installs to check every figure the chapters draw."""
import matplotlib
import matplotlib.pyplot as plt
import pytest

from internals.viz import legibility


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_a_figure_narrower_than_the_column_keeps_its_size():
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    ax.text(0.5, 0.5, "label", fontsize=7.2)
    sizes = dict((text, size) for size, text in legibility.page_text_sizes(fig))
    assert sizes["label"] == pytest.approx(7.2 * 100 / 72)     # 10 px


def test_a_figure_wider_than_the_column_is_scaled_down_with_its_text():
    fig, ax = plt.subplots(figsize=(16, 3), dpi=100)
    ax.text(0.5, 0.5, "label", fontsize=7.2)
    renderer = fig.canvas.get_renderer()
    width = fig.get_tightbbox(renderer).width * fig.dpi
    assert width > legibility.COLUMN_PX
    size = dict((text, size) for size, text in legibility.page_text_sizes(fig))["label"]
    assert size == pytest.approx(10 * legibility.COLUMN_PX / width)
    assert ("label" in [text for _, text in legibility.too_small(fig)]) == (size < legibility.SMALLEST_PX)


def test_texts_that_are_not_drawn_do_not_count():
    fig, (left, right) = plt.subplots(1, 2, figsize=(6, 3), dpi=100)
    left.tick_params(labelsize=4)
    left.axis("off")                      # its tiny tick labels are never drawn
    right.text(0.5, 0.5, "hidden", fontsize=4).set_visible(False)
    right.text(0.5, 0.2, " ", fontsize=4)
    right.tick_params(labelsize=12)
    assert legibility.too_small(fig) == []
    left.axis("on")
    assert legibility.too_small(fig) != []


def test_the_hook_logs_small_text_when_a_figure_is_drawn(tmp_path, monkeypatch):
    log = tmp_path / "figure-text.log"
    monkeypatch.setenv(legibility.LOG_VARIABLE, str(log))
    with matplotlib.rc_context({"figure.hooks": ["internals.viz.legibility:watch"]}):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
        ax.set_title("the picture")
        ax.text(0.5, 0.5, "tiny", fontsize=5)
        ax.text(0.5, 0.2, "readable", fontsize=9)
        assert not log.exists()            # nothing until the figure is drawn
        fig.savefig(tmp_path / "figure.png", bbox_inches="tight")    # draws it twice
        fig.canvas.draw()
    assert log.read_text().splitlines() == ["'the picture': 'tiny' is 6.9 px"]   # once


def test_the_hook_names_a_figure_by_its_suptitle(tmp_path, monkeypatch):
    log = tmp_path / "figure-text.log"
    monkeypatch.setenv(legibility.LOG_VARIABLE, str(log))
    with matplotlib.rc_context({"figure.hooks": ["internals.viz.legibility:watch"]}):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
        fig.suptitle("the whole figure")
        ax.set_title("one panel")
        ax.text(0.5, 0.5, "tiny", fontsize=5)
        fig.canvas.draw()
    assert log.read_text().splitlines() == ["'the whole figure': 'tiny' is 6.9 px"]


def test_the_hook_does_nothing_without_its_log(tmp_path, monkeypatch):
    monkeypatch.delenv(legibility.LOG_VARIABLE, raising=False)
    with matplotlib.rc_context({"figure.hooks": ["internals.viz.legibility:watch"]}):
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, "tiny", fontsize=5)
        fig.savefig(tmp_path / "figure.png")
    assert list(tmp_path.iterdir()) == [tmp_path / "figure.png"]
