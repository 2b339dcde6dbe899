/* The CUDA caching allocator, replayed (c10/cuda/CUDACachingAllocator.cpp).
 *
 * A recorded program of allocations and frees, step by step: the segments the allocator took
 * from the device (cudaMalloc), the blocks it split them into, which are in use, how freed
 * neighbours merge back, the small and large pools, and an allocation that fails at first,
 * succeeds once the allocator has returned a cached segment, and one that cannot succeed.
 * Each state is the package's allocator's own (internals/cuda/caching_allocator.py), recorded at
 * build time with its trace entries (_record_memory_history).
 */
(function () {
  "use strict";
  const {el} = window.LiveFigures;

  function mib(bytes) {
    return bytes >= 1 << 20 ? `${+(bytes / (1 << 20)).toFixed(2)} MiB` : `${+(bytes / 1024).toFixed(1)} KiB`;
  }

  function mount(host, data) {
    const steps = data.steps || [];
    if (!steps.length) {
      host.append(el("p", {}, "(the allocator data was not built: run scripts/figure_data.py)"));
      return;
    }
    let step = 0;         // 0: nothing run yet; k: after the k-th line
    const prev = el("button", {type: "button", "data-action": "prev", "aria-label": "previous step"}, "◀ back");
    const next = el("button", {type: "button", "data-action": "next", "aria-label": "next step"}, "step ▶");
    const reset = el("button", {type: "button", "data-action": "reset"}, "start over");
    const program = el("ol", {class: "live-program", "data-role": "program"},
                       steps.map((s, i) => el("li", {"data-line": i + 1}, el("code", {}, s.code))));
    const status = el("p", {class: "live-message", role: "status", "aria-live": "polite", "data-role": "status"});
    const totals = el("p", {class: "live-readout", "data-role": "totals"});
    const memory = el("div", {class: "live-memory", "data-role": "segments"});
    host.append(el("div", {class: "live-steps", role: "group", "aria-label": "steps"}, prev, next, reset),
                program, status, totals, memory);

    function segment(seg) {
      const bar = el("div", {class: "live-segment", style: `width: ${Math.max(100 * seg.size / data.capacity, 12)}%`});
      for (const b of seg.blocks) {
        const label = b.allocated ? `${b.name} ${mib(b.size)}` : `free ${mib(b.size)}`;
        bar.append(el("span", {class: b.allocated ? "live-block-used" : "live-block-free", tabindex: "0",
                               style: `flex-grow: ${b.size}`, title: label, "aria-label": label,
                               "data-size": b.size, "data-name": b.name || "", "data-offset": b.offset},
                      b.allocated ? b.name : ""));
      }
      const text = seg.blocks.map((b) => (b.allocated ? `${b.name} ${mib(b.size)}` : `free ${mib(b.size)}`)).join(", ");
      return el("div", {class: "live-segmentwrap", "data-pool": seg.pool, "data-size": seg.size},
                el("p", {class: "live-caption"}, `${seg.pool} pool segment, ${mib(seg.size)}: ${text}`), bar);
    }

    function draw() {
      const s = step ? steps[step - 1] : null;
      const state = s ? s.state : {segments: [], allocated: 0, reserved: 0};
      program.querySelectorAll("li").forEach((li, i) => li.classList.toggle("live-chosen", i === step - 1));
      memory.replaceChildren(...state.segments.map(segment));
      totals.textContent = `allocated ${mib(state.allocated)} · reserved ${mib(state.reserved)} · ` +
                           `device ${mib(data.capacity)}`;
      const actions = s ? s.trace.map((t) => `${t.action} ${mib(t.size)}`).join(", ") : "";
      status.textContent = !s ? "Nothing allocated yet." : (s.error ? `${s.error} ` : "") +
        `trace: ${actions || "(nothing)"}`;
      status.classList.toggle("live-error", Boolean(s && s.error));
      host.dataset.step = String(step);
      prev.disabled = step === 0;
      next.disabled = step === steps.length;
    }

    prev.addEventListener("click", () => { step = Math.max(step - 1, 0); draw(); });
    next.addEventListener("click", () => { step = Math.min(step + 1, steps.length); draw(); });
    reset.addEventListener("click", () => { step = 0; draw(); });
    draw();
  }

  window.LiveFigures.register("allocator", mount);
})();
