"""``internals/_numba_inlining.py``: Numba's inliner copies a callee's scope once per copy of its IR
(shared by the copied blocks), where Numba's own copies it once per block. What the inlined code
computes is unchanged."""
from numba import njit
from numba.core import inline_closurecall, ir

import internals
from internals import _numba_inlining


@njit(inline="always")
def _branchy(x):
    """A callee of many blocks: every ``if`` and loop is one."""
    total = 0
    for i in range(x):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= 1
        else:
            for j in range(i):
                if j & 1:
                    total += j
    return total


def _caller():
    @njit
    def caller(x):
        return _branchy(x) + _branchy(x + 1)
    return caller


def _scopes_of_inlined_blocks(monkeypatch, inline_ir):
    """The number of distinct scope objects among the copied callee's blocks, at each inlining."""
    seen, find = [], inline_closurecall._get_all_scopes

    def counting(blocks):
        seen.append(len({id(block.scope) for block in blocks.values()}))
        return find(blocks)

    monkeypatch.setattr(inline_closurecall, "_get_all_scopes", counting)
    monkeypatch.setattr(inline_closurecall.InlineWorker, "inline_ir", inline_ir)
    caller = _caller()
    return seen, caller(9)


def test_the_package_installs_its_inliner():
    assert internals is not None     # importing the package installs it
    assert inline_closurecall.InlineWorker.inline_ir is _numba_inlining.inline_ir


def test_an_inlined_callee_shares_one_scope_copy(monkeypatch):
    seen, result = _scopes_of_inlined_blocks(monkeypatch, _numba_inlining.inline_ir)
    assert seen == [1, 1]
    assert result == _branchy.py_func(9) + _branchy.py_func(10)


def test_numbas_own_inliner_copies_the_scope_per_block(monkeypatch):
    """What the package's inliner changes: Numba's copies one scope per block (so this test would
    tell if a Numba release stopped doing so, and the package's copy could go)."""
    seen, result = _scopes_of_inlined_blocks(monkeypatch, _numba_inlining._inline_ir)
    assert len(seen) == 2 and min(seen) > 5
    assert result == _branchy.py_func(9) + _branchy.py_func(10)


def test_scopes_deep_copy_as_python_does_after_an_inlining():
    """The shared copy lives only while the inliner runs."""
    assert _caller()(4) == _branchy.py_func(4) + _branchy.py_func(5)
    assert "__deepcopy__" not in ir.Scope.__dict__
