/* Live figures: small interactive pictures that run in the reader's browser, offline.
 *
 * Each figure file registers a mount function under a name; on page load every
 * <div class="live-figure" data-figure="NAME"></div> gets its figure. Plain scripts, not ES
 * modules: a book opened from disk (file://) may not load modules, and these must work there.
 * The figures' data (window.LiveFigureData) is written by scripts/figure_data.py from the
 * `internals` package at build time.
 */
(function () {
  "use strict";
  const mounts = {};

  /* Create an element: el("div", {class: "x", "aria-label": "y"}, child, "text", ...). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "on") {
        for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
      } else if (value !== null && value !== undefined && value !== false) {
        node.setAttribute(key, value === true ? "" : value);
      }
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  /* "3, 4" -> [3, 4]; "" -> []; null where a piece is not an integer. */
  function parseInts(text) {
    const pieces = String(text).split(/[\s,()[\]]+/).filter((p) => p !== "");
    const values = pieces.map(Number);
    return values.every(Number.isInteger) ? values : null;
  }

  /* A labelled input: [label, input] pair, the input real and keyboard reachable. */
  function field(label, value, name, extra) {
    const id = `live-${name}-${Math.random().toString(36).slice(2, 8)}`;
    const input = el("input", Object.assign({id, value, name, type: "text", spellcheck: "false",
                                              autocomplete: "off", "data-field": name}, extra || {}));
    return {label: el("label", {for: id}, label), input};
  }

  function show(list) {
    return `[${list.join(", ")}]`;
  }

  function register(name, mount) {
    mounts[name] = mount;
  }

  function mountAll(root) {
    for (const host of (root || document).querySelectorAll(".live-figure[data-figure]")) {
      const mount = mounts[host.dataset.figure];
      if (!mount || host.dataset.mounted) continue;
      host.dataset.mounted = "true";
      host.replaceChildren();
      mount(host, (window.LiveFigureData || {})[host.dataset.figure] || {});
    }
  }

  window.LiveFigures = {register, mountAll, el, parseInts, field, show};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => mountAll());
  } else {
    setTimeout(() => mountAll(), 0);
  }
})();
