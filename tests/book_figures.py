"""The book's live figures, driven in headless Chromium with the network off, against the package.

Each figure runs in the reader's browser with JavaScript that repeats a rule of the package; here
the rule is checked: for random inputs, what the figure shows equals what ``internals`` computes.
Strides: the storage elements a view highlights are the ones ``as_strided`` selects, and a
sequence of steps ends in the sizes, strides and offset (or the error) the package gives.
TensorIterator: the broadcast shape, loop order, output strides and coalesced loop of the
package's own iterator. Dispatch: the key and kernel the package's dispatch table picks. Plus:
each figure fits a 400 px phone and a 1400 px screen with legible text, its controls are named
and reachable from the keyboard (under ``make screenshots``, a picture of each goes to
``_build/screenshots``).

Run by ``make test`` after the book build (not named test_*.py, so ``pytest tests`` skips it).
Needs a Chromium, found as tests/book_pages.py finds it; without one the checks are skipped.
"""
import json
import random

import pytest
from book_pages import CHROMIUM, HTML, SHOTS, TAKE_SHOTS

import internals
from internals.aten import dispatcher
from internals.c10.dispatch_key import DispatchKey
from internals.viz import live

FIGURES = {"strides": "02_strides", "iterator": "04_kernels", "dispatch": "05_dispatch", "autograd": "06_autograd",
           "allocator": "07_memory"}
CASES = 20


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium found: install Debian's chromium, or set CHROMIUM to a Chromium binary")
    from playwright.sync_api import sync_playwright
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


def open_figure(browser, name, width=1400):
    """The chapter page holding the figure, offline; returns (page, the figure's element)."""
    path = HTML / "notebooks" / f"{FIGURES[name]}.html"
    if not path.exists():
        pytest.fail("no built book: run the book build first")
    context = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
    page = context.new_page()
    errors = []
    # only the figures' own errors: the theme's scripts have one of their own (THEBE_JS_URL declared twice)
    page.on("pageerror", lambda e: errors.append(str(e)) if "figures/" in (e.stack or "") else None)
    page.goto(path.as_uri(), wait_until="load")
    host = page.locator(f'.live-figure[data-figure="{name}"]')
    host.wait_for()
    page.wait_for_function(f'document.querySelector(\'.live-figure[data-figure="{name}"]\').dataset.mounted')
    page.errors = errors
    return page, host


def set_field(host, name, value):
    """Types into one field as a reader does (the field must be visible and editable)."""
    field = host.locator(f'[data-field="{name}"]')
    field.fill(str(value))
    field.dispatch_event("change")


# The random cases' edits, made from inside the page in one call each: fields set in order (a change
# event each, which is all the figures listen to), then buttons clicked (a DOM click, which runs the
# same listener). A missing field or button fails the call. test_strides_cells_answer_the_keyboard
# and test_figure_fits_and_is_named drive the controls as a reader does.
EDIT = r"""(host, [fields, buttons]) => {
  for (const [name, value] of fields) {
    const field = host.querySelector(`[data-field="${name}"]`);
    field.value = value;
    field.dispatchEvent(new Event('change', {bubbles: true}));
  }
  for (const action of buttons) host.querySelector(`[data-action="${action}"]`).click();
}"""


def edit(host, fields, buttons=()):
    """Sets ``fields`` ((name, value) pairs, in order), then clicks ``buttons`` (their data-action)."""
    host.evaluate(EDIT, [[[name, str(value)] for name, value in fields], list(buttons)])


def listed(values):
    return ", ".join(str(v) for v in values)


# ---------------------------------------------------------------------------- strides
def ints(text):
    return [int(v) for v in text.split(",")] if text else []


def shown_view(host):
    """The view the figure shows (sizes, strides, offset) and the error it shows, if any."""
    data = host.evaluate("h => Object.assign({}, h.dataset)")
    view = {"sizes": ints(data["sizes"]), "strides": ints(data["strides"]), "offset": int(data["offset"])}
    return view, data["error"]


def random_geometry(rng):
    storage = rng.randint(1, 24)
    ndim = rng.choice([0, 1, 2, 2, 3])
    sizes = [rng.randint(0, 4) for _ in range(ndim)]
    strides = [rng.randint(-1 if rng.random() < 0.1 else 0, 6) for _ in range(ndim)]
    offset = rng.randint(-1 if rng.random() < 0.1 else 0, storage)
    return storage, sizes, strides, offset


def test_strides_highlight_what_as_strided_selects(browser):
    page, host = open_figure(browser, "strides")
    rng = random.Random(0)
    made = refused = 0
    for _ in range(CASES):
        storage, sizes, strides, offset = random_geometry(rng)
        base = internals.arange(float(storage))
        try:
            expected = [int(v) for v in base.as_strided(sizes, strides, offset).flatten().tolist()]
            error = ""
        except RuntimeError as e:
            expected, error = None, live.error_text(e)
        edit(host, [("storage", storage), ("sizes", listed(sizes)), ("strides", listed(strides)), ("offset", offset)])
        view, shown_error = shown_view(host)
        assert shown_error == error, (storage, sizes, strides, offset)
        if expected is None:
            refused += 1
            continue
        made += 1
        assert view == {"sizes": sizes, "strides": strides, "offset": offset}
        cells = host.locator('[data-role="grid"] [data-storage]').evaluate_all("cs => cs.map(c => +c.dataset.storage)")
        reached = host.locator('[data-role="storage"] .live-reached').evaluate_all(
            "cs => cs.map(c => +c.dataset.storage)")
        assert cells == expected, (storage, sizes, strides, offset)
        assert reached == sorted(set(expected))
        assert host.locator('[data-role="storage"] [data-storage]').count() == storage
    assert made > 5 and refused > 2, "the random cases should both make views and be refused"
    assert page.errors == []


def random_step(rng, ndim):
    if ndim == 0:
        return rng.choice([("view", [rng.choice([1, -1])] * rng.randint(0, 2)), ("expand", [rng.randint(1, 3)])])
    dim = rng.randint(-ndim, ndim - 1) if rng.random() < 0.9 else ndim
    sizes = [rng.choice([-1, 1, 2, 3, 4, 6, 12]) for _ in range(rng.randint(1, 3))]
    return rng.choice([
        ("view", sizes), ("t", []), ("transpose", [dim, rng.randint(0, ndim - 1)]),
        ("permute", rng.sample(range(ndim), ndim) if rng.random() < 0.8 else [0] * ndim),
        ("expand", [rng.choice([-1, 2]) for _ in range(rng.randint(ndim, ndim + 1))]),
        ("slice", [rng.randint(0, ndim - 1), rng.randint(-3, 3), rng.randint(-2, 5), rng.choice([1, 1, 2, 3, 0, -1])]),
        ("select", [dim, rng.randint(-4, 4)]),
    ])


def test_strides_steps_follow_the_package(browser):
    page, host = open_figure(browser, "strides")
    rng = random.Random(1)
    for _ in range(8):
        storage = rng.choice([6, 12, 24])
        edit(host, [("storage", storage), ("sizes", storage), ("strides", 1), ("offset", 0)], ["reset"])
        x = internals.arange(float(storage))
        for _ in range(5):
            op, args = random_step(rng, x.dim())
            try:
                x = live.apply_step(x, op, args)
                error = ""
            except (RuntimeError, IndexError, ValueError) as e:
                error = live.error_text(e)
            edit(host, [("op", op), ("args", listed(args))], ["apply"])
            view, shown_error = shown_view(host)
            assert shown_error == error, (op, args)
            assert view == live.step_result(x), (op, args)
    assert page.errors == []


def test_strides_examples_show_the_recorded_results(browser):
    page, host = open_figure(browser, "strides")
    for i, (label, storage, steps) in enumerate(live.STRIDE_EXAMPLES):
        host.locator('[data-field="preset"]').select_option(str(i))
        results = live.run_steps(storage, steps)
        made = [r for r in results if "error" not in r]
        view, error = shown_view(host)
        assert error == results[-1].get("error", ""), label
        assert view == (made[-1] if made else {"sizes": [storage], "strides": [1], "offset": 0}), label


def test_strides_cells_answer_the_keyboard(browser):
    page, host = open_figure(browser, "strides")
    set_field(host, "storage", 12)
    set_field(host, "sizes", "3, 4")
    set_field(host, "strides", "1, 3")
    set_field(host, "offset", 0)
    cell = host.locator('[data-role="grid"] [data-index="1,2"]')
    cell.focus()
    assert host.locator('[data-role="readout"]').inner_text() == "x[1, 2] → storage[7] = 0 + 1·1 + 2·3"
    assert host.locator('[data-role="storage"] [data-storage="7"]').evaluate("c => c.classList.contains('live-hot')")
    page.keyboard.press("Tab")
    assert host.locator('[data-role="grid"] [data-index="1,3"]').evaluate("c => c === document.activeElement")


# ---------------------------------------------------------------------------- TensorIterator
def random_operands(rng):
    ndim = rng.randint(1, 3)
    a = [rng.randint(1, 4) for _ in range(ndim)]
    b = [n if rng.random() < 0.6 else (1 if rng.random() < 0.8 else n + 1) for n in a][rng.randint(0, ndim - 1):]
    if rng.random() < 0.3:
        a, b = b, a
    return (a, rng.sample(range(len(a)), len(a))), (b, rng.sample(range(len(b)), len(b)))


def test_iterator_builds_as_the_package_does(browser):
    page, host = open_figure(browser, "iterator")
    rng = random.Random(2)
    fast = slow = refused = 0
    for _ in range(CASES):
        a, b = random_operands(rng)
        try:
            expected, error = live.iterator_steps(a, b), ""
        except RuntimeError as e:
            expected, error = None, live.error_text(e)
        edit(host, [(f"{name}-{field}", listed(value)) for name, (shape, perm) in (("a", a), ("b", b))
                    for field, value in (("shape", shape), ("order", perm))])
        assert host.get_attribute("data-error") == error, (a, b)
        if expected is None:
            refused += 1
            continue
        shown = json.loads(host.get_attribute("data-result"))
        assert shown == {"shape": expected["shape"], "fast": expected["fast"],
                         "broadcastStrides": expected["broadcast_strides"], "perm": expected["perm"],
                         "outputStrides": expected["output_strides"], "loopShape": expected["loop_shape"],
                         "loopStrides": expected["loop_strides"]}, (a, b)
        fast, slow = fast + expected["fast"], slow + (not expected["fast"])
    assert fast and slow > 5 and refused, "the random cases should reach every branch"
    assert page.errors == []


def test_iterator_steps_one_stage_at_a_time(browser):
    page, host = open_figure(browser, "iterator")
    stages = host.locator('[data-role="stages"] h4')
    host.locator('[data-stage="0"]').click()
    assert stages.count() == 1
    host.locator('[data-action="next"]').click()
    host.locator('[data-action="next"]').click()
    assert stages.count() == 3
    assert host.locator('[data-stage="2"]').get_attribute("aria-pressed") == "true"


# ---------------------------------------------------------------------------- dispatch
def package_choice(name, keys):
    """The key and kernel the package's dispatcher would run for a call with these keys."""
    op = dispatcher.aten_ops[name]
    bits = sum(1 << int(DispatchKey[k]) for k in keys) & ~op.fallthrough_bits
    if bits == 0:
        return "", live.undefined_kernel(name)
    key = DispatchKey(bits.bit_length() - 1)
    entry = op.table.get(key)
    return key.name, (live.kernel_label(*entry) if entry else None)


# Clicks, from inside the page, each checkbox ("set key") whose state is not the wanted one (a DOM
# click: the box toggles and its change listener runs), then reads every wanted box back; a missing
# box fails the call. One call a case, where asking box by box took one for each set and key.
CHECK_THESE = r"""(host, wanted) => {
  const box = (name) => { const [set, key] = name.split(' ');
                          return host.querySelector(`input[data-set="${set}"][data-key="${key}"]`); };
  for (const [name, checked] of Object.entries(wanted)) if (box(name).checked !== checked) box(name).click();
  return Object.fromEntries(Object.keys(wanted).map((name) => [name, box(name).checked]));
}"""


def test_dispatch_picks_the_package_kernel(browser):
    page, host = open_figure(browser, "dispatch")
    rng = random.Random(3)
    names = [k.name for k in DispatchKey]
    for case in range(CASES):
        index = rng.randrange(len(live.DISPATCH_OPERATORS))
        name = live.DISPATCH_OPERATORS[index]
        host.locator('[data-field="operator"]').select_option(str(index))
        chosen = {s: {k for k in names if rng.random() < p} for s, p in
                  (("tensor", 0.3), ("included", 0.15), ("excluded", 0.15))}
        if case % 5 == 0:
            chosen["tensor"] = set()
        wanted = {f"{s} {k}": k in keys for s, keys in chosen.items() for k in names}
        assert host.evaluate(CHECK_THESE, wanted) == wanted
        call = (chosen["tensor"] | chosen["included"]) - chosen["excluded"]
        key, kernel = package_choice(name, call)
        assert host.get_attribute("data-key") == key, (name, call)
        if kernel is None:
            assert host.get_attribute("data-error").startswith(f"NotImplementedError: Could not run 'aten::{name}'")
        else:
            assert host.get_attribute("data-kernel") == kernel, (name, call)
    assert page.errors == []


# ---------------------------------------------------------------------------- autograd
# What one backward step shows, read in one call: each node's dependency count, the running
# (highlighted) nodes with the gradient each received, and whether "next" is enabled.
ENGINE_STATE = r"""(host) => ({
  deps: Object.fromEntries([...host.querySelectorAll('.live-node')].map((b) => [b.dataset.node, b.dataset.deps])),
  hot: [...host.querySelectorAll('.live-node.live-hot')].map((b) => [b.dataset.node, b.dataset.grad]),
  next: !host.querySelector('[data-action="next"]').disabled})"""


def test_autograd_steps_show_the_engine_state(browser):
    """Forward, the nodes appear in sequence order; backward, after each step the dependency
    counts and the running node are the package engine's, and the leaves' gradients are torch's."""
    import torch
    page, host = open_figure(browser, "autograd")
    data = live.autograd_data()
    forward = sorted((n["seq"], i) for i, n in enumerate(data["nodes"]) if n["seq"] is not None)
    next_button = host.locator('[data-action="next"]')
    for k in range(len(forward)):
        next_button.click()
        shown = host.locator(".live-node:not([hidden])").evaluate_all("bs => bs.map(b => +b.dataset.node)")
        assert {i for _, i in forward[:k + 1]} <= set(shown)
    next_button.click()             # backward starts: the counts compute_dependencies made
    for step in [None] + data["backward"]:
        deps = data["deps"] if step is None else step["deps"]
        shown = host.evaluate(ENGINE_STATE)
        assert shown["deps"] == {str(i): str(deps.get(str(i), 0)) for i in range(len(data["nodes"]))}
        if step is not None:
            assert [node for node, _ in shown["hot"]] == [str(step["node"])]
            assert json.loads(shown["hot"][0][1]) == step["grads_in"][0]
        if shown["next"]:
            next_button.click()
    leaves, y = live.run_program(torch)
    y.backward()
    status = host.locator('[data-role="status"]').inner_text()
    for name, leaf in leaves.items():
        assert data["grads"][name] == pytest.approx(leaf.grad.tolist(), rel=1e-5)
        assert f"{name}.grad = " in status
    assert page.errors == []


# ---------------------------------------------------------------------------- caching allocator
SHOWN_SEGMENTS = r"""(host) => [...host.querySelectorAll('[data-pool]')].map((seg) => ({
  pool: seg.dataset.pool, size: +seg.dataset.size,
  blocks: [...seg.querySelectorAll('[data-size]')]
    .map((b) => [+b.dataset.offset, +b.dataset.size, b.dataset.name])}))"""


def test_allocator_state_after_each_step_is_the_recorded_one(browser):
    page, host = open_figure(browser, "allocator")
    data = live.allocator_data()
    assert host.evaluate(SHOWN_SEGMENTS) == []
    for k, step in enumerate(data["steps"], 1):
        host.locator('[data-action="next"]').click()
        assert host.get_attribute("data-step") == str(k)
        expected = [{"pool": s["pool"], "size": s["size"],
                     "blocks": [[b["offset"], b["size"], b["name"] or ""] for b in s["blocks"]]}
                    for s in step["state"]["segments"]]
        assert host.evaluate(SHOWN_SEGMENTS) == expected, step["code"]
        status = host.locator('[data-role="status"]').inner_text()
        assert ("OutOfMemoryError" in status) == bool(step["error"])
        assert all(t["action"] in status for t in step["trace"])
    assert host.locator('[data-action="next"]').is_disabled()
    assert page.errors == []


# ---------------------------------------------------------------------------- every figure
FITS = r"""(host) => {
  const edge = host.getBoundingClientRect().right;
  const past = [...host.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > edge + 1)
    .map((e) => e.tagName + ' ' + (e.textContent || '').slice(0, 30));
  const small = [...host.querySelectorAll('*')].filter((e) => e.childNodes.length && [...e.childNodes]
    .some((n) => n.nodeType === 3 && n.textContent.trim()) && parseFloat(getComputedStyle(e).fontSize) < 9)
    .map((e) => e.tagName + ' ' + e.textContent.slice(0, 30));
  const controls = [...host.querySelectorAll('input, select, button')];
  const unnamed = controls.filter((c) => !(c.getAttribute('aria-label') || (c.labels && c.labels.length)
    || c.textContent.trim())).map((c) => c.outerHTML.slice(0, 60));
  return {past, small, unnamed, scrolls: host.scrollWidth > host.clientWidth + 1, controls: controls.length};
}"""


@pytest.mark.parametrize("width", [400, 1400])
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_fits_and_is_named(browser, name, width):
    page, host = open_figure(browser, name, width)
    report = host.evaluate(FITS)
    if TAKE_SHOTS:
        host.screenshot(path=str(SHOTS / f"figure-{name}-{width}.png"))
    assert report["controls"] > 2
    assert report["past"] == [] and not report["scrolls"], report["past"]
    assert report["small"] == [], report["small"]
    assert report["unnamed"] == [], report["unnamed"]
    first = host.locator("input:enabled, select:enabled, button:enabled").first
    first.focus()
    assert first.evaluate("e => e === document.activeElement && getComputedStyle(e).outlineStyle !== 'none'")
    assert page.errors == []
