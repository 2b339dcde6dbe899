/* Dispatch: which kernel runs for a call (c10/core/DispatchKeySet.h, aten/src/ATen/core/dispatch).
 *
 * A call's key set is the union of its tensors' keys and the thread's included keys, minus the
 * thread's excluded keys; the operator's fallthrough entries are masked out; the highest key
 * left picks the kernel from the operator's computed table. The keys, the tables and the
 * default thread-local sets come from the package (internals/c10/dispatch_key.py,
 * internals/aten/dispatcher.py), written at build time.
 */
(function () {
  "use strict";
  const {el} = window.LiveFigures;
  const SETS = [["tensor", "in the tensor's key set", "tensor"], ["included", "thread-local included", "incl."],
                ["excluded", "thread-local excluded", "excl."]];

  /* The dispatcher's choice: {key, kernel} or {error}. */
  function choose(keys, op, tensor, included, excluded) {
    const call = keys.filter((k) => (tensor.has(k) || included.has(k)) && !excluded.has(k));
    const live = call.filter((k) => !(op.table[k] && op.table[k].fallthrough));
    if (live.length === 0) {
      if (op.undefined) return {call, key: "", kernel: op.undefined};
      return {call, key: "", error: notAvailable(op, "Undefined")};
    }
    const key = live[live.length - 1];      // keys are listed lowest priority first
    const entry = op.table[key];
    if (!entry) return {call, key, error: notAvailable(op, key)};
    return {call, key, kernel: entry.kernel};
  }

  function notAvailable(op, key) {
    return `NotImplementedError: Could not run '${op.name}' with arguments from the '${key}' backend. ` +
           `'${op.name}' is only available for these backends: [${op.available.join(", ")}].`;
  }

  function mount(host, data) {
    const keys = data.keys || [];
    const ops = data.operators || [];
    if (!keys.length || !ops.length) {
      host.append(el("p", {}, "(the dispatch data was not built: run scripts/figure_data.py)"));
      return;
    }
    const sets = {tensor: new Set(data.tensors[0].keys), included: new Set(data.included),
                  excluded: new Set(data.excluded)};
    const opSelect = el("select", {"aria-label": "operator", "data-field": "operator"},
                        ops.map((op, i) => el("option", {value: String(i)}, op.name)));
    const tensorSelect = el("select", {"aria-label": "tensor", "data-field": "tensor"},
                            data.tensors.map((t, i) => el("option", {value: String(i)}, t.label)));
    const resetButton = el("button", {type: "button", "data-action": "reset"}, "Default thread-local sets");
    const result = el("p", {class: "live-message", role: "status", "aria-live": "polite", "data-role": "result"});
    const body = el("tbody", {});
    const checks = {};
    const order = keys.slice().reverse();       // highest priority first, as the dispatcher looks
    for (const key of order) {
      checks[key] = {};
      const cells = SETS.map(([set, label]) => {
        const box = el("input", {type: "checkbox", "data-set": set, "data-key": key, "aria-label": `${key}: ${label}`});
        box.addEventListener("change", () => {
          if (box.checked) sets[set].add(key); else sets[set].delete(key);
          draw();
        });
        checks[key][set] = box;
        return el("td", {}, box);
      });
      body.append(el("tr", {"data-key": key},
                     el("th", {scope: "row"}, el("span", {class: "live-key"}, key), el("br", {}),
                        el("span", {class: "live-entry", "data-role": "entry"})), cells));
    }
    host.append(
      el("div", {class: "live-controls"}, opSelect, tensorSelect, resetButton),
      result,
      el("div", {class: "live-scroll"},
         el("table", {class: "live-table"},
            el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "key (highest first) and this operator's entry"),
                               SETS.map(([, label, short]) => el("th", {scope: "col", title: label}, short)))),
            body)));

    function draw() {
      const op = ops[Number(opSelect.value)];
      const pick = choose(keys, op, sets.tensor, sets.included, sets.excluded);
      for (const key of keys) {
        for (const [set] of SETS) checks[key][set].checked = sets[set].has(key);
        const row = body.querySelector(`tr[data-key="${key}"]`);
        const entry = op.table[key];
        const inCall = pick.call.includes(key);
        row.classList.toggle("live-chosen", key === pick.key);
        row.classList.toggle("live-fallthrough", inCall && Boolean(entry && entry.fallthrough));
        row.classList.toggle("live-incall", inCall);
        row.querySelector('[data-role="entry"]').textContent =
          (inCall ? "● " : "") + (entry ? entry.kernel : "—");
      }
      host.dataset.key = pick.key;
      host.dataset.kernel = pick.kernel || "";
      host.dataset.error = pick.error || "";
      result.textContent = pick.error ? pick.error
        : `${op.name} runs ${pick.kernel}${pick.key ? `, the entry of ${pick.key}` : " (no key left: the composite kernel)"}; ` +
          `call's keys: {${pick.call.join(", ")}}`;
      result.classList.toggle("live-error", Boolean(pick.error));
    }

    opSelect.addEventListener("change", draw);
    tensorSelect.addEventListener("change", () => {
      sets.tensor = new Set(data.tensors[Number(tensorSelect.value)].keys);
      draw();
    });
    resetButton.addEventListener("click", () => {
      sets.included = new Set(data.included);
      sets.excluded = new Set(data.excluded);
      draw();
    });
    draw();
  }

  window.LiveFigures.register("dispatch", mount);
  window.LiveFigures.dispatch = {choose};
})();
