"""What the value stack of a frame holds at an instruction (``torch/_dynamo/bytecode_analysis.py``).

Dynamo's resume function after a graph break takes the values left on the stack as its first
arguments, ``___stack0``, ``___stack1``... (a NULL a call pushes is not counted), and its graph
names a tensor it received there ``L_stack0_``. This compiler runs the function rather than
reading its bytecode, so at a read it asks here what the stack held: each instruction's pops and
pushes are followed along the code's jumps up to the instruction that reads, each slot labelled
with what pushed it (a local's name for ``LOAD_FAST``). Python's stack depth at an instruction
is the same on every path, so the first path that reaches it is enough.
"""
import dis
import types

__all__ = ["NULL", "in_for_loop", "in_try_block", "resume_offset", "stack_below"]

NULL = ("null",)

# Instructions that pop this many values and push one (an operation's result).
_POP_PUSH_ONE = {"BINARY_OP": 2, "COMPARE_OP": 2, "IS_OP": 2, "CONTAINS_OP": 2, "BINARY_SUBSCR": 2,
                 "UNARY_NEGATIVE": 1, "UNARY_NOT": 1, "UNARY_INVERT": 1, "UNARY_POSITIVE": 1, "GET_ITER": 1,
                 "LOAD_ATTR": 1, "GET_LEN": 0, "LOAD_ASSERTION_ERROR": 0, "LOAD_BUILD_CLASS": 0}
# Instructions that only pop.
_POP = {"POP_TOP": 1, "STORE_FAST": 1, "STORE_DEREF": 1, "STORE_GLOBAL": 1, "STORE_NAME": 1, "STORE_ATTR": 2,
        "STORE_SUBSCR": 3, "DELETE_SUBSCR": 2, "LIST_APPEND": 1, "SET_ADD": 1, "LIST_EXTEND": 1, "SET_UPDATE": 1,
        "DICT_UPDATE": 1, "DICT_MERGE": 1, "MAP_ADD": 2, "PRINT_EXPR": 1}
_NOTHING = {"NOP", "RESUME", "PRECALL", "KW_NAMES", "EXTENDED_ARG", "CACHE", "MAKE_CELL", "COPY_FREE_VARS",
            "DELETE_FAST", "DELETE_DEREF", "DELETE_GLOBAL", "DELETE_NAME", "JUMP_FORWARD", "JUMP_BACKWARD",
            "JUMP_BACKWARD_NO_INTERRUPT"}
_BUILD = {"BUILD_TUPLE": 1, "BUILD_LIST": 1, "BUILD_SET": 1, "BUILD_STRING": 1, "BUILD_SLICE": 1, "BUILD_MAP": 2}
_ENDS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}


def in_for_loop(code, offset):
    """Whether the instruction at ``offset`` is inside a ``for`` loop's body (between its
    ``FOR_ITER`` and the loop's end): Dynamo does not resume there and runs the whole frame
    without graphs instead."""
    return any(ins.offset < offset < ins.argval for ins in dis.get_instructions(code) if ins.opname == "FOR_ITER")


def in_try_block(code, offset):
    """Whether the instruction at ``offset`` is inside a ``try`` block (its exception table
    sends it to a handler that is no ``with`` statement's cleanup): Dynamo resumes no frame
    there either."""
    instructions = list(dis.get_instructions(code))
    after = {a.offset: b for a, b in zip(instructions, instructions[1:])}
    by_offset = {ins.offset: ins for ins in instructions}
    for entry in dis.Bytecode(code).exception_entries:
        handler = by_offset.get(entry.target)
        if entry.start <= offset < entry.end and handler is not None and handler.opname == "PUSH_EXC_INFO" and \
                getattr(after.get(handler.offset), "opname", None) != "WITH_EXCEPT_START":
            return True
    return False


def resume_offset(code, offset, truth):
    """Where the code goes on after a jump on a condition at ``offset`` (a frame's ``f_lasti``)
    that found the condition ``truth``: the offset Dynamo's resume function starts at. Python
    3.11 repeats a ``while`` loop's test at the loop's end, so the test read at the start and at
    the end of a turn leads to one resume function. ``offset`` itself for another instruction."""
    instructions = list(dis.get_instructions(code))
    found = max((ins for ins in instructions if ins.offset <= offset), key=lambda ins: ins.offset, default=None)
    if found is None or "_IF_" not in found.opname:
        return offset
    jumps = found.opname.endswith("_IF_TRUE") == truth      # POP_JUMP_FORWARD_IF_FALSE and kin
    return found.argval if jumps else found.offset + 2


def stack_below(code, offset, f_globals, methods=False):
    """The labels of the stack slots below the operands of the instruction at ``offset`` (a
    call, or a jump on a condition; ``offset`` may be a frame's ``f_lasti``), bottom first, and
    whether that instruction leaves a result above them; None where the code holds an
    instruction this reading does not follow. With ``methods``, a method loaded for a call
    (``LOAD_METHOD`` of an object, not a module) is labelled ``("method", its object's label)``
    instead of ``("value",)``."""
    instructions = list(dis.get_instructions(code))
    index = {ins.offset: i for i, ins in enumerate(instructions)}
    # a frame's f_lasti may point into the inline cache after its instruction (a call in flight)
    offset = max((ins.offset for ins in instructions if ins.offset <= offset), default=None)
    if offset is None:
        return None
    states, work = {0: []}, [0]
    while work:
        i = work.pop()
        ins, stack = instructions[i], list(states[i])
        if ins.offset == offset:
            return _operands_below(ins, stack)
        successors = _step(ins, stack, f_globals, methods)
        if successors is None:
            return None
        for target, after in successors:
            j = i + 1 if target is None else index.get(target)
            if j is not None and j < len(instructions) and j not in states:
                states[j] = after
                work.append(j)
    return None


def _operands_below(ins, stack):
    if ins.opname == "CALL":
        n = ins.arg + 2
        return (stack[:-n], True) if len(stack) >= n else None
    if ins.opname.startswith("POP_JUMP") or ins.opname in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        return stack[:-1], False
    return None


def _step(ins, stack, f_globals, methods=False):
    """[(jump target or None for the next instruction, the stack there)] after ``ins``; None
    for an instruction not followed."""
    name, arg = ins.opname, ins.arg
    if name in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF"):
        stack.append(("local", ins.argval))
    elif name == "LOAD_CONST":
        stack.append(("constant",))
    elif name in ("LOAD_GLOBAL", "LOAD_NAME"):
        if name == "LOAD_GLOBAL" and arg & 1:
            stack.append(NULL)
        stack.append(("global", ins.argval))
    elif name == "PUSH_NULL":
        stack.append(NULL)
    elif name == "LOAD_METHOD":
        owner = stack.pop()
        # a module's function comes with a NULL; a method with the object it is bound to
        module = owner[0] == "global" and isinstance(f_globals.get(owner[1]), types.ModuleType)
        stack.extend([NULL, ("value",)] if module else [("method", owner) if methods else ("value",), owner])
    elif name == "CALL":
        del stack[len(stack) - arg - 2:]
        stack.append(("value",))
    elif name == "CALL_FUNCTION_EX":
        del stack[len(stack) - (4 if arg & 1 else 3):]
        stack.append(("value",))
    elif name in _POP_PUSH_ONE:
        del stack[len(stack) - _POP_PUSH_ONE[name]:]
        stack.append(("value",))
    elif name in _POP:
        del stack[len(stack) - _POP[name]:]
    elif name in _BUILD:
        del stack[len(stack) - _BUILD[name] * arg:]
        stack.append(("value",))
    elif name == "BUILD_CONST_KEY_MAP":
        del stack[len(stack) - arg - 1:]
        stack.append(("value",))
    elif name == "MAKE_FUNCTION":     # the code, and a tuple or dict per flag: defaults, closure...
        del stack[len(stack) - 1 - bin(arg & 0x0F).count("1"):]
        stack.append(("value",))
    elif name == "FORMAT_VALUE":
        del stack[len(stack) - (2 if arg & 4 else 1):]
        stack.append(("value",))
    elif name == "UNPACK_SEQUENCE":
        stack.pop()
        stack.extend([("value",)] * arg)
    elif name == "COPY":
        stack.append(stack[-arg])
    elif name == "SWAP":
        stack[-1], stack[-arg] = stack[-arg], stack[-1]
    elif name == "FOR_ITER":
        return [(None, [*stack, ("value",)]), (ins.argval, stack[:-1])]
    elif name.startswith("POP_JUMP"):
        stack.pop()
        return [(None, stack), (ins.argval, list(stack))]
    elif name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        return [(None, stack[:-1]), (ins.argval, list(stack))]
    elif name not in _NOTHING and name not in _ENDS:
        return None
    if name in _ENDS:
        return [(ins.argval, stack)] if name.startswith("JUMP") else []
    return [(None, stack)]
