/* Autograd: a recorded forward, then backward node by node (torch/csrc/autograd/engine.cpp).
 *
 * Forward, each operation adds its backward node, pointing at the nodes of its inputs. Backward,
 * the engine first counts, for every node, the edges that point at it (compute_dependencies);
 * it runs a node once all of them have delivered, adds up the gradients a node receives twice,
 * and hands each result down an edge, lowering the count there. The graph, the counts and the
 * gradients are the package's engine's own (internals/autograd/engine.py), recorded at build time.
 */
(function () {
  "use strict";
  const {el, show} = window.LiveFigures;
  const SVG = "http://www.w3.org/2000/svg";

  const fmt = (g) => (g === null || g === undefined ? "—" : show(g.map((v) => +v.toFixed(4))));

  function mount(host, data) {
    const nodes = data.nodes || [];
    if (!nodes.length) {
      host.append(el("p", {}, "(the autograd data was not built: run scripts/figure_data.py)"));
      return;
    }
    const forward = nodes.map((n, i) => i).filter((i) => nodes[i].seq !== null).sort((a, b) => nodes[a].seq - nodes[b].seq);
    const total = forward.length + 1 + data.backward.length;     // the forward, backward's start, its steps
    let step = 0;

    const prev = el("button", {type: "button", "data-action": "prev", "aria-label": "previous step"}, "◀ back");
    const next = el("button", {type: "button", "data-action": "next", "aria-label": "next step"}, "step ▶");
    const reset = el("button", {type: "button", "data-action": "reset"}, "start over");
    const status = el("p", {class: "live-message", role: "status", "aria-live": "polite", "data-role": "status"});
    const code = el("pre", {class: "live-code", "data-role": "program"});
    const stage = el("div", {class: "live-graph", "data-role": "graph"});
    const lines = document.createElementNS(SVG, "svg");
    lines.setAttribute("class", "live-edges");
    lines.setAttribute("aria-hidden", "true");
    const rows = [];
    const boxes = nodes.map((n, i) => {
      const box = el("div", {class: "live-node", tabindex: "0", "data-node": i},
                     el("strong", {}, n.leaf ? `AccumulateGrad (${n.leaf})` : n.name),
                     n.seq === null ? null : el("span", {class: "live-caption"}, `sequence nr ${n.seq}`),
                     el("span", {class: "live-caption", "data-role": "deps"}),
                     el("span", {class: "live-caption", "data-role": "grad"}));
      while (rows.length <= n.row) rows.push(el("div", {class: "live-row"}));
      rows[n.row].append(box);
      return box;
    });
    stage.append(lines, ...rows);
    host.append(el("div", {class: "live-steps", role: "group", "aria-label": "steps"}, prev, next, reset),
                status, code, stage);

    function countsAt(k) {          // dependency counts after backward step k (-1: before any)
      return k < 0 ? data.deps : data.backward[k].deps;
    }

    function draw() {
      const b = step - forward.length - 2;          // the backward step shown; -1: backward's start
      const built = new Set(forward.slice(0, Math.min(step, forward.length)));
      for (const i of [...built]) for (const e of nodes[i].next) if (e) built.add(e[0]);
      const deps = step > forward.length ? countsAt(b) : null;
      const ran = new Set(data.backward.slice(0, Math.max(b + 1, 0)).map((s) => s.node));
      const waiting = b >= 0 ? data.backward[b].waiting : {};
      boxes.forEach((box, i) => {
        box.hidden = !built.has(i);
        box.classList.toggle("live-hot", b >= 0 && data.backward[b].node === i);
        box.classList.toggle("live-done", ran.has(i) && !(b >= 0 && data.backward[b].node === i));
        const d = deps ? (deps[String(i)] ?? 0) : null;
        box.dataset.deps = d === null ? "" : String(d);
        box.querySelector('[data-role="deps"]').textContent = d === null ? "" : `waits for ${d} more`;
        const got = b >= 0 && data.backward[b].node === i ? data.backward[b].grads_in[0]
          : waiting[String(i)] ? waiting[String(i)][0] : null;
        box.dataset.grad = got ? JSON.stringify(got) : "";
        box.querySelector('[data-role="grad"]').textContent = got ? `grad ${fmt(got)}` : "";
        box.setAttribute("aria-label", `${box.firstChild.textContent}${d === null ? "" : `, waits for ${d}`}` +
                         (got ? `, gradient ${fmt(got)}` : ""));
      });
      const lineCount = step === 0 ? 2 : Math.min(2 + step, data.program.length - 1);
      code.textContent = data.program.slice(0, step > forward.length ? data.program.length : lineCount).join("\n");
      host.dataset.step = String(step);
      status.textContent = describe(b);
      prev.disabled = step === 0;
      next.disabled = step === total;
      requestAnimationFrame(drawEdges);
    }

    function describe(b) {
      if (step === 0) return "Two leaves that require grad; no graph yet.";
      if (step <= forward.length) {
        const n = nodes[forward[step - 1]];
        return `forward: ${n.name} recorded (sequence number ${n.seq}), pointing at the nodes of its inputs`;
      }
      if (b < 0) return "backward starts: each node waits for as many gradients as edges point at it";
      const s = data.backward[b];
      const n = nodes[s.node];
      const done = b === data.backward.length - 1 ? ` Done: x.grad = ${fmt(data.grads.x)}, w.grad = ${fmt(data.grads.w)}.` : "";
      return `backward ${b + 1}: ${n.leaf ? `AccumulateGrad of ${n.leaf}` : n.name} runs on ${fmt(s.grads_in[0])}.${done}`;
    }

    /* Arrows from each node to the nodes its edges point at, drawn between the boxes' places. */
    function drawEdges() {
      lines.replaceChildren();
      const origin = stage.getBoundingClientRect();
      lines.setAttribute("width", origin.width);
      lines.setAttribute("height", origin.height);
      nodes.forEach((n, i) => {
        if (boxes[i].hidden) return;
        const a = boxes[i].getBoundingClientRect();
        for (const e of n.next) {
          if (!e || boxes[e[0]].hidden) continue;
          const c = boxes[e[0]].getBoundingClientRect();
          // an edge that skips rows bends out to the right, past the boxes between
          const x1 = a.right - origin.left - 6;
          const y1 = a.top + a.height / 2 - origin.top;
          const x2 = c.right - origin.left - 6;
          const y2 = c.top + c.height / 2 - origin.top;
          const skips = nodes[e[0]].row - n.row > 1;
          const path = document.createElementNS(SVG, "path");
          path.setAttribute("d", skips
            ? `M ${x1} ${y1} C ${x1 + 60} ${y1}, ${x2 + 60} ${y2}, ${x2} ${y2}`
            : `M ${a.left + a.width / 2 - origin.left} ${a.bottom - origin.top} L ${c.left + c.width / 2 - origin.left} ${c.top - origin.top}`);
          lines.append(path);
        }
      });
    }

    prev.addEventListener("click", () => { step = Math.max(step - 1, 0); draw(); });
    next.addEventListener("click", () => { step = Math.min(step + 1, total); draw(); });
    reset.addEventListener("click", () => { step = 0; draw(); });
    window.addEventListener("resize", () => requestAnimationFrame(drawEdges));
    draw();
  }

  window.LiveFigures.register("autograd", mount);
})();
