"""The live figures' data (internals.viz.live, written by scripts/figure_data.py) and ``show``'s HTML.

The data is what the package computes, so these tests compare it with torch where torch answers
the same question (a view's geometry, a sum's output strides, the dispatch key order), and check
that the written script and the inlined HTML load nothing from the network.
"""
import importlib.util
import json
import re
from pathlib import Path

import pytest
import torch

from internals.c10.dispatch_key import DispatchKey
from internals.viz import live

ROOT = Path(__file__).resolve().parents[2]


def torch_steps(storage, steps):
    x = torch.arange(float(storage))
    out = []
    for op, args in steps:
        try:
            x = live.apply_step(x, op, args)
        except (RuntimeError, IndexError, ValueError) as e:
            out.append({"error": live.error_text(e)})
            break
        out.append(live.step_result(x))
    return out


@pytest.mark.parametrize("example", live.STRIDE_EXAMPLES, ids=lambda e: e[0])
def test_stride_examples_match_torch(example):
    label, storage, steps = example
    assert live.run_steps(storage, steps) == torch_steps(storage, steps)


def test_stride_examples_include_a_refused_view():
    assert any("error" in live.run_steps(n, steps)[-1] for _, n, steps in live.STRIDE_EXAMPLES)


@pytest.mark.parametrize("example", live.ITERATOR_EXAMPLES, ids=lambda e: e[0])
def test_iterator_examples_match_torch(example):
    label, a, b = example
    expected = live.iterator_steps(a, b)
    x, y = (live.permuted_operand(*a).to_torch(), live.permuted_operand(*b).to_torch())
    theirs = x + y
    assert expected["shape"] == list(theirs.shape)
    assert expected["output_strides"] == list(theirs.stride())
    assert [expected["inputs"][0]["strides"], expected["inputs"][1]["strides"]] == [list(x.stride()), list(y.stride())]
    if not expected["fast"]:    # the loop visits every element once
        assert sorted(expected["perm"]) == list(range(len(expected["shape"])))
    assert expected["loop_shape"] and torch.Size(expected["loop_shape"]).numel() == theirs.numel()


def test_dispatch_keys_in_torch_order():
    data = live.dispatch_data()
    assert data["keys"] == [k.name for k in sorted(DispatchKey)]
    full = str(torch._C._dispatch_keyset_full()).removeprefix("DispatchKeySet(").removesuffix(")").split(", ")
    ours = [k for k in data["keys"] if k in full]
    assert ours == [k for k in full if k in ours]     # same relative order as torch's
    for op in data["operators"]:
        assert set(op["table"]) <= set(data["keys"])
        assert all(entry["fallthrough"] == (entry["kernel"] == "fallthrough") for entry in op["table"].values())


def test_script_writes_all_figures(tmp_path):
    """The script's own ``main``, with its command line, run in this process: a fresh one would
    spend its time importing the package (``make test`` runs the script as a command anyway,
    before the book build)."""
    out = tmp_path / "data.js"
    spec = importlib.util.spec_from_file_location("figure_data", ROOT / "scripts" / "figure_data.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(["--out", str(out)])
    text = out.read_text()
    prefix = "window.LiveFigureData = Object.assign(window.LiveFigureData || {}, "
    assert text.startswith(prefix) and text.endswith(");\n")
    data = json.loads(text[len(prefix):-3])
    assert sorted(data) == sorted(live.FIGURES)
    assert data["strides"]["presets"][0]["results"] == live.run_steps(*live.STRIDE_EXAMPLES[0][1:])


def test_show_inlines_everything():
    page = live.html_for("strides")
    assert 'data-figure="strides"' in page
    assert not re.search(r"""(src|href)\s*=|https?://|import\(""", page)
    body = page[page.index("<script>") + len("<script>"):page.rindex("</script>")]
    assert "</script" not in body and "window.LiveFigures.register(\"strides\"" in body
    with pytest.raises(ValueError, match="no live figure"):
        live.html_for("nonesuch")


def test_autograd_recording_matches_torch():
    data = live.autograd_data()
    leaves, y = live.run_program(torch)
    y.backward()
    assert data["output"] == pytest.approx([y.item()], rel=1e-6)
    for name, leaf in leaves.items():
        assert data["grads"][name] == pytest.approx(leaf.grad.tolist(), rel=1e-5)
    _, theirs = live.run_program(torch)
    names, stack, seen = [], [theirs.grad_fn], set()
    while stack:                    # torch's graph, walked as graph_nodes walks the package's
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        names.append(node.name().replace("torch::autograd::", ""))
        stack += [n for n, _ in reversed(node.next_functions) if n is not None]
    assert [n["name"] for n in data["nodes"]] == names
    # every node runs once, after all its gradients arrived; the last counts are all zero
    assert sorted(s["node"] for s in data["backward"]) == list(range(len(data["nodes"])))
    assert set(data["backward"][-1]["deps"].values()) == {0}
    assert max(data["deps"].values()) == 2


def test_allocator_recording_tells_its_story():
    """The states are the allocator's: totals that add up, a freed neighbour merged, a failed
    first try that a released cached segment rescues, and an allocation that stays out of memory."""
    from internals.cuda.caching_allocator import OutOfMemoryError
    data = live.allocator_data()
    for step in data["steps"]:
        state = step["state"]
        assert state["reserved"] == sum(s["size"] for s in state["segments"])
        assert state["allocated"] == sum(b["size"] for s in state["segments"] for b in s["blocks"] if b["allocated"])
        assert state["reserved"] <= data["capacity"]
        for seg in state["segments"]:    # blocks tile their segment
            assert [b["offset"] for b in seg["blocks"]] == [sum(b["size"] for b in seg["blocks"][:i])
                                                            for i in range(len(seg["blocks"]))]
    actions = [[t["action"] for t in step["trace"]] for step in data["steps"]]
    assert ["segment_free", "segment_alloc", "alloc"] in actions
    oom = [step for step in data["steps"] if step["error"]]
    assert len(oom) == 1 and oom[0]["error"].startswith(f"{OutOfMemoryError.__name__}: CUDA out of memory")
    pools = {s["pool"] for step in data["steps"] for s in step["state"]["segments"]}
    assert pools == {"small", "large"}
