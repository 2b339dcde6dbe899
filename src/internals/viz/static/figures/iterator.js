/* TensorIterator: how `a + b` decides its loop (aten/src/ATen/TensorIterator.cpp).
 *
 * The reader picks each operand's shape and memory order and steps through the build: the
 * broadcast shape (compute_shape), the fast path for operands sharing one dense layout
 * (fast_set_up), each operand's strides over the broadcast shape (compute_strides), the loop
 * order (reorder_dimensions), the new output's strides, and the merged loop
 * (coalesce_dimensions). The same steps in Python: internals/aten/tensor_iterator.py.
 */
(function () {
  "use strict";
  const {el, parseInts, field, show} = window.LiveFigures;
  const MAX_DIMS = 3;     // channels-last layouts (a 4-d rule) stay out of this picture

  function contiguousStrides(sizes) {
    const strides = new Array(sizes.length);
    let step = 1;
    for (let d = sizes.length - 1; d >= 0; d--) {
      strides[d] = step;
      step *= Math.max(sizes[d], 1);
    }
    return strides;
  }

  /* An operand of `sizes` laid out in memory with dims `order` from slowest to fastest. */
  function operand(sizes, order) {
    const dense = contiguousStrides(order.map((d) => sizes[d]));
    const strides = new Array(sizes.length);
    order.forEach((d, k) => { strides[d] = dense[k]; });
    return {sizes, strides};
  }

  function isContiguous(sizes, strides) {
    let expected = 1;
    for (let d = sizes.length - 1; d >= 0; d--) {
      if (sizes[d] === 1) continue;
      if (strides[d] !== expected) return false;
      expected *= sizes[d];
    }
    return true;
  }

  /* infer_size: line the shapes up from the right; sizes must match or be 1. */
  function broadcastShape(a, b) {
    const n = Math.max(a.length, b.length);
    const out = new Array(n);
    for (let i = n - 1; i >= 0; i--) {
      const off = n - 1 - i;
      const sa = off < a.length ? a[a.length - 1 - off] : 1;
      const sb = off < b.length ? b[b.length - 1 - off] : 1;
      if (sa !== sb && sa !== 1 && sb !== 1) {
        throw new Error(`RuntimeError: The size of tensor a (${sa}) must match the size of tensor b (${sb}) ` +
                        `at non-singleton dimension ${i}`);
      }
      out[i] = sa === 1 ? sb : sa;
    }
    return out;
  }

  /* compute_strides: strides over the broadcast shape, 0 where the operand is broadcast. */
  function operandStrides(op, shape) {
    const lead = shape.length - op.sizes.length;
    return shape.map((_, d) => (d < lead ? 0 : (op.sizes[d - lead] === 1 && shape[d] !== 1 ? 0 : op.strides[d - lead])));
  }

  /* compute_fast_setup_type, for inputs that are all dense: one shared layout, or none. */
  function fastLayout(ops, shape) {
    if (!ops.every((op) => show(op.sizes) === show(shape))) return null;
    const same = ops.every((op) => show(op.strides) === show(ops[0].strides));
    if (ops.every((op) => isContiguous(op.sizes, op.strides))) return contiguousStrides(shape);
    return same ? ops[0].strides.slice() : null;
  }

  /* reorder_dimensions: an insertion sort of the dims, fastest first, that moves a dim only
   * when some operand strictly prefers it (stride-0 dims and ties keep their row-major place). */
  function reorder(shape, strides) {
    const shouldSwap = (d0, d1) => {
      for (const s of strides) {
        if (s[d0] === 0 || s[d1] === 0) continue;
        if (s[d0] !== s[d1]) return s[d0] > s[d1] ? 1 : -1;
        if (shape[d0] > shape[d1]) return 1;
      }
      return 0;
    };
    const perm = shape.map((_, i) => shape.length - 1 - i);
    for (let i = 1; i < shape.length; i++) {
      let d1 = i;
      for (let d0 = i - 1; d0 >= 0; d0--) {
        const cmp = shouldSwap(perm[d0], perm[d1]);
        if (cmp > 0) {
          [perm[d0], perm[d1]] = [perm[d1], perm[d0]];
          d1 = d0;
        } else if (cmp < 0) {
          break;
        }
      }
    }
    return perm;
  }

  /* The new output: dense, its dims laid out in the loop's order. */
  function outputStrides(shape, perm) {
    const strides = new Array(shape.length);
    let step = 1;
    for (const d of perm) {
      strides[d] = step;
      step *= shape[d];
    }
    return perm.every((d, i) => d === shape.length - 1 - i) ? contiguousStrides(shape) : strides;
  }

  /* coalesce_dimensions: merge a dim into the previous (faster) one where every operand allows. */
  function coalesce(shape, strides) {
    if (shape.length === 0) return {shape: [], strides: strides.map(() => [])};
    const sh = shape.slice();
    const st = strides.map((s) => s.slice());
    let prev = 0;
    for (let d = 1; d < sh.length; d++) {
      const mergeable = sh[prev] === 1 || sh[d] === 1 || st.every((s) => sh[prev] * s[prev] === s[d]);
      if (mergeable) {
        if (sh[prev] === 1) st.forEach((s) => { s[prev] = s[d]; });
        sh[prev] *= sh[d];
      } else {
        prev += 1;
        if (prev !== d) {
          st.forEach((s) => { s[prev] = s[d]; });
          sh[prev] = sh[d];
        }
      }
    }
    return {shape: sh.slice(0, prev + 1), strides: st.map((s) => s.slice(0, prev + 1))};
  }

  /* The whole build for a + b. */
  function build(a, b) {
    const shape = broadcastShape(a.sizes, b.sizes);
    const numel = shape.reduce((x, y) => x * y, 1);
    const fast = fastLayout([a, b], shape);
    if (fast) {
      return {shape, fast: true, broadcastStrides: null, perm: null, outputStrides: fast,
              loopShape: [numel], loopStrides: [[1], [1], [1]]};
    }
    const broadcastStrides = [operandStrides(a, shape), operandStrides(b, shape)];
    const perm = reorder(shape, broadcastStrides);
    const outStrides = outputStrides(shape, perm);
    // the loop is laid out over all three operands, the new output first
    const all = [operandStrides({sizes: shape, strides: outStrides}, shape)].concat(broadcastStrides);
    const loopPerm = reorder(shape, all);
    const loop = coalesce(loopPerm.map((d) => shape[d]), all.map((s) => loopPerm.map((d) => s[d])));
    if (shape.length === 0) {
      loop.shape = [1];
      loop.strides = [[0], [0], [0]];
    }
    return {shape, fast: false, broadcastStrides, perm, outputStrides: outStrides,
            loopShape: loop.shape, loopStrides: loop.strides};
  }

  function readOperand(shapeField, orderField, name) {
    const sizes = parseInts(shapeField.input.value);
    const order = parseInts(orderField.input.value);
    if (sizes === null || sizes.length > MAX_DIMS || sizes.some((n) => n < 1)) {
      throw new Error(`Input: ${name}'s shape takes up to ${MAX_DIMS} positive integers`);
    }
    const sorted = (order || []).slice().sort((x, y) => x - y);
    if (order === null || show(sorted) !== show(sizes.map((_, i) => i))) {
      throw new Error(`Input: ${name}'s memory order lists each of its dims 0..${sizes.length - 1} once`);
    }
    return operand(sizes, order);
  }

  const STAGES = ["broadcast", "fast path", "strides", "reorder", "output", "coalesce"];

  function mount(host, data) {
    const presets = data.presets || [];
    const aShape = field("a: shape", "3, 4", "a-shape");
    const aOrder = field("memory order (slowest first)", "1, 0", "a-order");
    const bShape = field("b: shape", "4", "b-shape");
    const bOrder = field("memory order (slowest first)", "0", "b-order");
    const presetSelect = el("select", {"aria-label": "example", "data-field": "preset"},
                            el("option", {value: ""}, "examples…"),
                            presets.map((p, i) => el("option", {value: String(i)}, p.label)));
    const stageButtons = STAGES.map((name, i) => el("button", {type: "button", "data-stage": i,
                                                                "aria-pressed": "false"}, `${i + 1}. ${name}`));
    const prev = el("button", {type: "button", "data-action": "prev", "aria-label": "previous step"}, "◀");
    const next = el("button", {type: "button", "data-action": "next", "aria-label": "next step"}, "▶");
    const message = el("p", {class: "live-message", role: "status", "aria-live": "polite", "data-role": "message"});
    const body = el("div", {class: "live-scroll", "data-role": "stages", "aria-live": "polite"});
    const row = (f) => el("div", {class: "live-field"}, f.label, f.input);
    host.append(
      el("div", {class: "live-controls"}, row(aShape), row(aOrder)),
      el("div", {class: "live-controls"}, row(bShape), row(bOrder)),
      el("div", {class: "live-controls"}, presetSelect),
      el("div", {class: "live-steps", role: "group", "aria-label": "build steps"}, prev, stageButtons, next),
      message, body);
    let stage = STAGES.length - 1;
    let result = null;
    let operands = null;

    function table(headers, rows) {
      return el("table", {class: "live-table"},
                el("tr", {}, headers.map((h) => el("th", {scope: "col"}, h))),
                rows.map((r) => el("tr", {}, r.map((c, i) => (i === 0 ? el("th", {scope: "row"}, c) : el("td", {}, c))))));
    }

    function describe(i) {
      const r = result;
      const dims = r.shape.map((_, d) => `dim ${d}`);
      switch (STAGES[i]) {
        case "broadcast":
          return el("p", {}, `a ${show(operands[0].sizes)} strides ${show(operands[0].strides)}, b ${show(operands[1].sizes)} ` +
                    `strides ${show(operands[1].strides)} → broadcast shape `, el("code", {"data-out": "shape"}, show(r.shape)));
        case "fast path":
          return el("p", {"data-out": "fast"}, r.fast
            ? "Same shape and one shared dense layout: the output takes that layout and the loop is one flat run."
            : "No fast path: the shapes differ or the layouts do, so the iterator works out an order.");
        case "strides":
          return r.fast ? el("p", {}, "(skipped by the fast path)")
            : table(["operand"].concat(dims), [["a"].concat(r.broadcastStrides[0]), ["b"].concat(r.broadcastStrides[1])]);
        case "reorder":
          return r.fast ? el("p", {}, "(skipped by the fast path)")
            : el("p", {}, "loop order, fastest first: ", el("code", {"data-out": "perm"}, r.perm.map((d) => `dim ${d}`).join(", ")));
        case "output":
          return el("p", {}, "the new output's strides: ", el("code", {"data-out": "output-strides"}, show(r.outputStrides)));
        default:
          return el("div", {},
                    el("p", {}, "the loop (fastest dim first): shape ", el("code", {"data-out": "loop-shape"}, show(r.loopShape))),
                    table(["operand"].concat(r.loopShape.map((_, d) => `loop ${d}`)),
                          ["out", "a", "b"].map((name, k) => [name].concat(r.loopStrides[k]))));
      }
    }

    function draw() {
      stageButtons.forEach((b, i) => b.setAttribute("aria-pressed", String(i === stage)));
      prev.disabled = stage === 0;
      next.disabled = stage === STAGES.length - 1;
      body.replaceChildren();
      if (!result) return;
      for (let i = 0; i <= stage; i++) body.append(el("h4", {class: "live-caption"}, `${i + 1}. ${STAGES[i]}`), describe(i));
    }

    function recompute() {
      try {
        operands = [readOperand(aShape, aOrder, "a"), readOperand(bShape, bOrder, "b")];
        result = build(operands[0], operands[1]);
        message.textContent = "";
        message.classList.remove("live-error");
        host.dataset.error = "";
        host.dataset.result = JSON.stringify(result);
      } catch (error) {
        result = null;
        message.textContent = error.message;
        message.classList.add("live-error");
        host.dataset.error = error.message;
        host.dataset.result = "";
      }
      draw();
    }

    for (const f of [aShape, aOrder, bShape, bOrder]) f.input.addEventListener("change", recompute);
    stageButtons.forEach((b, i) => b.addEventListener("click", () => { stage = i; draw(); }));
    prev.addEventListener("click", () => { stage = Math.max(stage - 1, 0); draw(); });
    next.addEventListener("click", () => { stage = Math.min(stage + 1, STAGES.length - 1); draw(); });
    presetSelect.addEventListener("change", () => {
      const p = presets[Number(presetSelect.value)];
      if (!p) return;
      aShape.input.value = p.a.shape.join(", ");
      aOrder.input.value = p.a.perm.join(", ");
      bShape.input.value = p.b.shape.join(", ");
      bOrder.input.value = p.b.perm.join(", ");
      stage = 0;
      recompute();
    });
    recompute();
  }

  window.LiveFigures.register("iterator", mount);
  window.LiveFigures.iterator = {build, operand};
})();
