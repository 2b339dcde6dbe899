/* Strides and views: a view is sizes, strides and an offset over a flat storage.
 *
 * The reader sets the three numbers (as `as_strided` would) or applies steps (view, t, transpose,
 * permute, expand, slicing, select) to the current view, and sees which storage element each
 * index reaches. Each step computes the new geometry the way ATen does: `view` with
 * `computeStride` (aten/src/ATen/TensorUtils.cpp), `expand` with `inferExpandGeometry`
 * (aten/src/ATen/ExpandUtils.cpp), and a direct edit is checked as `setStorage` checks it
 * (c10/core/TensorImpl.h), so an impossible view shows the error torch raises. The same rules,
 * in Python, are internals/aten/native/tensor_shape.py and internals/c10/tensor_impl.py.
 */
(function () {
  "use strict";
  const {el, parseInts, field, show} = window.LiveFigures;
  const MAX_DRAWN = 512;      // past this many cells the picture would be noise: numbers only

  class TorchError extends Error {
    constructor(kind, message) {
      super(message);
      this.kind = kind;
    }
  }
  const fail = (message, kind) => { throw new TorchError(kind || "RuntimeError", message); };
  const prod = (list) => list.reduce((a, b) => a * b, 1);

  function wrapDim(dim, ndim) {
    const n = Math.max(ndim, 1);      // a 0-d tensor accepts dims -1 and 0, as if it had one
    if (dim < -n || dim > n - 1) {
      fail(`Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${dim})`, "IndexError");
    }
    return dim < 0 ? dim + n : dim;
  }

  /* infer_size_dv (aten/src/ATen/InferSize.h): resolve one -1 in the requested shape. */
  function inferSize(shape, numel) {
    if (shape.filter((s) => s === -1).length > 1) fail("only one dimension can be inferred");
    let known = 1;
    shape.forEach((s, i) => {
      if (s !== -1) {
        if (s < 0) fail(`invalid shape dimension ${s} at index ${i} of shape ${show(shape)}`);
        known *= s;
      }
    });
    const invalid = () => fail(`shape '${show(shape)}' is invalid for input of size ${numel}`);
    if (!shape.includes(-1)) {
      if (known !== numel) invalid();
      return shape.slice();
    }
    if (known === 0 && numel === 0) {
      fail(`cannot reshape tensor of 0 elements into shape ${show(shape)} because the unspecified ` +
           "dimension size -1 can be any value and is ambiguous");
    }
    if (known === 0 || numel % known) invalid();
    const out = shape.slice();
    out[out.indexOf(-1)] = numel / known;
    return out;
  }

  function contiguousStrides(sizes) {
    const strides = new Array(sizes.length);
    let step = 1;
    for (let d = sizes.length - 1; d >= 0; d--) {
      strides[d] = step;
      step *= Math.max(sizes[d], 1);
    }
    return strides;
  }

  /* computeStride: strides for newSizes over the old layout, or null when no view exists.
   * Old dims are grouped, from the last, into chunks contiguous among themselves; the new dims
   * must use up whole chunks, each new dim's stride a multiple of its chunk's base stride. */
  function computeStride(oldSizes, oldStrides, newSizes) {
    if (oldSizes.length === 0) return newSizes.map(() => 1);
    if (prod(oldSizes) === 0) {
      return show(oldSizes) === show(newSizes) ? oldStrides.slice() : contiguousStrides(newSizes);
    }
    const newStrides = new Array(newSizes.length).fill(0);
    let viewD = newSizes.length - 1;
    let chunkBase = oldStrides[oldStrides.length - 1];
    let tensorNumel = 1;
    let viewNumel = 1;
    for (let d = oldSizes.length - 1; d >= 0; d--) {
      tensorNumel *= oldSizes[d];
      const chunkEnds = d === 0 || (oldSizes[d - 1] !== 1 && oldStrides[d - 1] !== tensorNumel * chunkBase);
      if (!chunkEnds) continue;
      while (viewD >= 0 && (viewNumel < tensorNumel || newSizes[viewD] === 1)) {
        newStrides[viewD] = viewNumel * chunkBase;
        viewNumel *= newSizes[viewD];
        viewD -= 1;
      }
      if (viewNumel !== tensorNumel) return null;
      if (d > 0) {
        chunkBase = oldStrides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
    return viewD === -1 ? newStrides : null;
  }

  /* inferExpandGeometry: size-1 dims (and new leading ones) get stride 0. */
  function expand(v, sizes) {
    const ndim = v.sizes.length;
    if (sizes.length < ndim) {
      fail(`expand(torch.FloatTensor{${show(v.sizes)}}, size=${show(sizes)}): the number of sizes provided ` +
           `(${sizes.length}) must be greater or equal to the number of dimensions in the tensor (${ndim})`);
    }
    const lead = sizes.length - ndim;
    const newSizes = new Array(sizes.length);
    const newStrides = new Array(sizes.length);
    let nextSize = 1;
    let nextStride = 0;
    for (let i = sizes.length - 1; i >= 0; i--) {
      let size = sizes[i];
      let old;
      let stride;
      if (i < lead) {
        if (size < 0) fail(`The expanded size of the tensor (${size}) isn't allowed in a leading, non-existing dimension ${i}`);
        old = 1;
        stride = nextSize * nextStride;
      } else {
        old = v.sizes[i - lead];
        stride = v.strides[i - lead];
      }
      if (size === -1) size = old;
      if (old !== size) {
        if (old !== 1) {
          fail(`The expanded size of the tensor (${size}) must match the existing size (${old}) at ` +
               `non-singleton dimension ${i}.  Target sizes: ${show(sizes)}.  Tensor sizes: ${show(v.sizes)}`);
        }
        stride = 0;
      }
      newSizes[i] = size;
      newStrides[i] = stride;
      nextSize = size;
      nextStride = stride;
    }
    return {sizes: newSizes, strides: newStrides, offset: v.offset};
  }

  function swapped(list, a, b) {
    const out = list.slice();
    [out[a], out[b]] = [out[b], out[a]];
    return out;
  }

  function transpose(v, d0, d1) {
    const n = v.sizes.length;
    const a = wrapDim(d0, n);
    const b = wrapDim(d1, n);
    if (n === 0) return v;
    return {sizes: swapped(v.sizes, a, b), strides: swapped(v.strides, a, b), offset: v.offset};
  }

  function permute(v, dims) {
    const n = v.sizes.length;
    if (dims.length !== n) {
      fail("permute(sparse_coo): number of dimensions in the tensor input does not match the length of the " +
           `desired ordering of dimensions i.e. input.dim() = ${n} is not equal to len(dims) = ${dims.length}`);
    }
    const wrapped = dims.map((d) => wrapDim(d, n));
    if (new Set(wrapped).size !== wrapped.length) fail("permute(): duplicate dims are not allowed.");
    return {sizes: wrapped.map((d) => v.sizes[d]), strides: wrapped.map((d) => v.strides[d]), offset: v.offset};
  }

  /* x[..., start:stop:step] on one dim, with Python's clamping of start and stop. */
  function slice(v, dim, start, stop, step) {
    if (step === 0) fail("slice step cannot be zero", "ValueError");
    if (step < 0) fail("step must be greater than zero", "ValueError");
    const d = wrapDim(dim, v.sizes.length);
    const size = v.sizes[d];
    const clamp = (i) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
    const lo = clamp(start);
    const hi = Math.max(clamp(stop), lo);
    const sizes = v.sizes.slice();
    const strides = v.strides.slice();
    sizes[d] = Math.ceil((hi - lo) / step);
    strides[d] = v.strides[d] * step;
    return {sizes, strides, offset: v.offset + lo * v.strides[d]};
  }

  function select(v, dim, index) {
    if (v.sizes.length === 0) fail("select() cannot be applied to a 0-dim tensor.", "IndexError");
    const d = wrapDim(dim, v.sizes.length);
    const size = v.sizes[d];
    if (index < -size || index >= size) {
      fail(`select(): index ${index} out of range for tensor of size ${show(v.sizes)} at dimension ${d}`, "IndexError");
    }
    const i = index < 0 ? index + size : index;
    const keep = (list) => list.filter((_, k) => k !== d);
    return {sizes: keep(v.sizes), strides: keep(v.strides), offset: v.offset + i * v.strides[d]};
  }

  /* The steps the reader can apply: how many integers each takes, and what it does. */
  const STEPS = {
    view: {hint: "sizes, e.g. 4, 3 or -1", code: (a) => `view(${a.join(", ")})`,
           apply: (v, a) => {
             const sizes = inferSize(a, prod(v.sizes));
             const strides = computeStride(v.sizes, v.strides, sizes);
             if (strides === null) {
               fail("view size is not compatible with input tensor's size and stride (at least one dimension " +
                    "spans across two contiguous subspaces). Use .reshape(...) instead.");
             }
             return {sizes, strides, offset: v.offset};
           }},
    t: {hint: "no arguments", code: () => "t()",
        apply: (v) => {
          if (v.sizes.length > 2) fail(`t() expects a tensor with <= 2 dimensions, but self is ${v.sizes.length}D`);
          return v.sizes.length < 2 ? v : transpose(v, 0, 1);
        }},
    transpose: {hint: "dim0, dim1", arity: 2, code: (a) => `transpose(${a.join(", ")})`,
                apply: (v, a) => transpose(v, a[0], a[1])},
    permute: {hint: "dims, e.g. 1, 0", code: (a) => `permute(${a.join(", ")})`, apply: permute},
    expand: {hint: "sizes, -1 keeps one", code: (a) => `expand(${a.join(", ")})`, apply: expand},
    slice: {hint: "dim, start, stop, step", arity: 4,
            code: (a) => `[${":, ".repeat(Math.max(a[0], 0))}${a[1]}:${a[2]}:${a[3]}]`,
            apply: (v, a) => slice(v, a[0], a[1], a[2], a[3])},
    select: {hint: "dim, index", arity: 2, code: (a) => `select(${a.join(", ")})`,
             apply: (v, a) => select(v, a[0], a[1])},
  };

  function applyStep(view, op, args) {
    const step = STEPS[op];
    if (step.arity !== undefined && args.length !== step.arity) {
      fail(`${op} takes ${step.arity} integers here, got ${args.length}`, "TypeError");
    }
    return step.apply(view, args);
  }

  /* as_strided's checks, in torch's order: lengths, sizes, strides, offset, then the bounds. */
  function checkAsStrided(v, storage, itemsize) {
    if (v.sizes.length !== v.strides.length) fail("mismatch in length of strides and shape");
    if (v.sizes.some((n) => n < 0)) {
      fail(`Storage size calculation overflowed with sizes=${show(v.sizes)} and strides=${show(v.strides)}`);
    }
    if (v.strides.some((s) => s < 0)) {
      fail(`as_strided: Negative strides are not supported at the moment, got strides: ${show(v.strides)}`);
    }
    if (v.offset < 0) fail(`Tensor: invalid storage offset ${v.offset}`);
    const needed = requiredElements(v) * itemsize;
    if (needed > storage * itemsize) {
      fail(`setStorage: sizes ${show(v.sizes)}, strides ${show(v.strides)}, storage offset ${v.offset}, and ` +
           `itemsize ${itemsize} requiring a storage size of ${needed} are out of bounds for storage of size ` +
           `${storage * itemsize}`);
    }
  }

  function requiredElements(v) {
    if (v.sizes.includes(0)) return 0;
    return v.offset + v.sizes.reduce((last, n, d) => last + (n - 1) * v.strides[d], 0) + 1;
  }

  /* Every index of the view, row-major, with the storage element it reaches. */
  function elements(v) {
    const out = [];
    const total = prod(v.sizes);
    for (let flat = 0; flat < total; flat++) {
      const index = new Array(v.sizes.length);
      let rest = flat;
      for (let d = v.sizes.length - 1; d >= 0; d--) {
        index[d] = rest % v.sizes[d];
        rest = Math.floor(rest / v.sizes[d]);
      }
      out.push({index, at: v.offset + index.reduce((sum, i, d) => sum + i * v.strides[d], 0)});
    }
    return out;
  }

  function mount(host, data) {
    const itemsize = data.itemsize || 4;
    const presets = data.presets || [];
    let base = {storage: 12, steps: []};
    let view = {sizes: [3, 4], strides: [4, 1], offset: 0};
    let storage = 12;

    const storageField = field("storage elements", "12", "storage", {inputmode: "numeric"});
    const sizesField = field("sizes", "3, 4", "sizes");
    const stridesField = field("strides", "4, 1", "strides");
    const offsetField = field("storage offset", "0", "offset", {inputmode: "numeric"});
    const opSelect = el("select", {"aria-label": "step to apply", "data-field": "op"},
                        Object.keys(STEPS).map((op) => el("option", {value: op}, op)));
    const argsField = field("arguments", "", "args");
    const applyButton = el("button", {type: "button", "data-action": "apply"}, "Apply step");
    const resetButton = el("button", {type: "button", "data-action": "reset"}, "Start over");
    const presetSelect = el("select", {"aria-label": "example", "data-field": "preset"},
                            el("option", {value: ""}, "examples…"),
                            presets.map((p, i) => el("option", {value: String(i)}, p.label)));
    const code = el("code", {class: "live-code", "data-role": "code"});
    const message = el("p", {class: "live-message", role: "status", "aria-live": "polite", "data-role": "message"});
    const grid = el("div", {class: "live-grid", "data-role": "grid", "aria-label": "the view, one cell per index"});
    const strip = el("div", {class: "live-strip", "data-role": "storage", "aria-label": "the storage, one cell per element"});
    const readout = el("p", {class: "live-readout", "aria-live": "polite", "data-role": "readout"}, " ");

    const row = (...f) => el("div", {class: "live-field"}, f.flatMap((x) => [x.label, x.input]));
    host.append(
      el("div", {class: "live-controls"},
         row(storageField), row(sizesField), row(stridesField), row(offsetField)),
      el("div", {class: "live-controls"},
         el("div", {class: "live-field"}, opSelect, argsField.label, argsField.input, applyButton),
         el("div", {class: "live-field"}, presetSelect, resetButton)),
      el("p", {class: "live-codeline"}, code),
      message,
      el("p", {class: "live-caption"}, "Storage (float32, index = value)"), strip,
      el("p", {class: "live-caption"}, "The view: each cell shows the storage index it reads"), grid,
      readout);

    function codeText() {
      const steps = base.steps.map((s) => (s.op === "slice" ? STEPS.slice.code(s.args) : `.${STEPS[s.op].code(s.args)}`));
      const d = base.direct;
      const strided = d ? `.as_strided(${show(d.sizes)}, ${show(d.strides)}, ${d.offset})` : "";
      return `x = torch.arange(${base.storage}.)${strided}${steps.join("")}`;
    }

    function setMessage(error) {
      message.textContent = error ? `${error.kind || "Error"}: ${error.message}` : "";
      message.classList.toggle("live-error", Boolean(error));
      host.dataset.error = error ? `${error.kind || "Error"}: ${error.message}` : "";
    }

    function syncFields() {
      storageField.input.value = String(storage);
      sizesField.input.value = view.sizes.join(", ");
      stridesField.input.value = view.strides.join(", ");
      offsetField.input.value = String(view.offset);
    }

    function highlight(at, on) {
      for (const cell of host.querySelectorAll(`[data-storage="${at}"]`)) cell.classList.toggle("live-hot", on);
    }

    function cellEvents(at, describe) {
      return {mouseenter: () => { highlight(at, true); readout.textContent = describe(); },
              mouseleave: () => highlight(at, false),
              focus: () => { highlight(at, true); readout.textContent = describe(); },
              blur: () => highlight(at, false)};
    }

    function drawStorage(reach) {
      strip.replaceChildren();
      for (let k = 0; k < storage && k < MAX_DRAWN; k++) {
        const count = reach.get(k) || 0;
        const describe = () => `storage[${k}] is read by ${count} ${count === 1 ? "index" : "indices"} of the view`;
        strip.append(el("span", {class: count ? "live-cell live-reached" : "live-cell", tabindex: "0",
                                 "data-storage": k, "data-count": count, "aria-label": describe(),
                                 on: cellEvents(k, describe)}, String(k)));
      }
    }

    function drawGrid(items) {
      grid.replaceChildren();
      const n = view.sizes.length;
      const cols = n ? view.sizes[n - 1] : 1;
      const blocks = new Map();
      for (const item of items) {
        const key = item.index.slice(0, Math.max(n - 2, 0)).join(", ");
        if (!blocks.has(key)) blocks.set(key, []);
        blocks.get(key).push(item);
      }
      for (const [key, cells] of blocks) {
        const block = el("div", {class: "live-block", style: `grid-template-columns: repeat(${Math.max(cols, 1)}, auto)`});
        for (const {index, at} of cells) {
          const name = `x[${index.join(", ")}]`;
          const sum = index.map((i, d) => `${i}·${view.strides[d]}`).join(" + ");
          const describe = () => `${name} → storage[${at}] = ${view.offset}${sum ? " + " + sum : ""}`;
          block.append(el("span", {class: "live-cell", tabindex: "0", "data-index": index.join(","),
                                   "data-storage": at, "aria-label": describe(), on: cellEvents(at, describe)},
                          String(at)));
        }
        grid.append(key ? el("div", {class: "live-blockwrap"}, el("span", {class: "live-caption"}, `x[${key}, …]`), block)
                        : block);
      }
    }

    function draw() {
      code.textContent = codeText();
      host.dataset.sizes = view.sizes.join(",");
      host.dataset.strides = view.strides.join(",");
      host.dataset.offset = String(view.offset);
      const total = prod(view.sizes);
      if (total > MAX_DRAWN || storage > MAX_DRAWN) {
        grid.replaceChildren(el("p", {}, `${total} elements over ${storage}: too many to draw.`));
        strip.replaceChildren();
        return;
      }
      const items = elements(view);
      const reach = new Map();
      for (const {at} of items) reach.set(at, (reach.get(at) || 0) + 1);
      drawStorage(reach);
      drawGrid(items);
    }

    function onEdit() {
      const n = Number(storageField.input.value);
      const sizes = parseInts(sizesField.input.value);
      const strides = parseInts(stridesField.input.value);
      const offset = parseInts(offsetField.input.value);
      if (!Number.isInteger(n) || n < 1 || sizes === null || strides === null || offset === null || offset.length !== 1) {
        setMessage({kind: "Input", message: "storage elements, sizes, strides and offset take integers"});
        return;
      }
      const candidate = {sizes, strides, offset: offset[0]};
      try {
        checkAsStrided(candidate, n, itemsize);
      } catch (error) {
        setMessage(error);
        return;
      }
      storage = n;
      base = {storage: n, steps: [], direct: candidate};
      view = candidate;
      setMessage(null);
      draw();
    }

    function onApply() {
      const op = opSelect.value;
      const args = STEPS[op].arity === undefined && op === "t" ? [] : parseInts(argsField.input.value);
      if (args === null) {
        setMessage({kind: "Input", message: `${op} takes integers: ${STEPS[op].hint}`});
        return;
      }
      try {
        const next = applyStep(view, op, args);
        base.steps.push({op, args});
        view = next;
        setMessage(null);
      } catch (error) {
        setMessage(error);
        return;
      }
      syncFields();
      draw();
    }

    /* From arange(storageSize), apply the steps in turn; one that fails stops there and says why,
     * leaving the view the steps before it made. */
    function start(storageSize, steps) {
      storage = storageSize;
      base = {storage: storageSize, steps: []};
      view = {sizes: [storageSize], strides: [1], offset: 0};
      setMessage(null);
      for (const s of steps) {
        try {
          view = applyStep(view, s.op, s.args);
          base.steps.push(s);
        } catch (error) {
          setMessage(error);
          break;
        }
      }
      syncFields();
      draw();
    }

    for (const f of [storageField, sizesField, stridesField, offsetField]) f.input.addEventListener("change", onEdit);
    opSelect.addEventListener("change", () => { argsField.input.placeholder = STEPS[opSelect.value].hint; });
    argsField.input.placeholder = STEPS.view.hint;
    argsField.input.addEventListener("keydown", (e) => { if (e.key === "Enter") onApply(); });
    applyButton.addEventListener("click", onApply);
    resetButton.addEventListener("click", () => start(storage, []));
    presetSelect.addEventListener("change", () => {
      const preset = presets[Number(presetSelect.value)];
      if (preset) start(preset.storage, preset.steps);
    });
    start(12, [{op: "view", args: [3, 4]}]);
  }

  window.LiveFigures.register("strides", mount);
  window.LiveFigures.strides = {computeStride, applyStep, checkAsStrided, elements};
})();
