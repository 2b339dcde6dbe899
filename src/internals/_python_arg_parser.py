"""PythonArgParser: which overload a Python call means, and its arguments converted
(``torch/csrc/utils/python_arg_parser.cpp``).

The generated Tensor methods and namespace functions (``_generated/``) each hold one parser,
built from the Python signatures of an operator name's overloads in the order torch tries them,
written as torch writes them::

    PythonArgParser(["sum(*, ScalarType? dtype=None)",
                     "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"])

``parse(args, kwargs)`` returns the first signature that accepts the call, as ``PythonArgs``:
its index ``idx`` (the generated code switches on it to pick the operator) and typed accessors
(``tensor(i)``, ``scalar(i)``, ``intlist(i)``, ...) that convert each argument the way the
operator's schema wants it. A Python number given for a Tensor parameter becomes a 0-dim
*wrapped number* tensor -- for the few operators torch allows it (add, sub, mul, div, copy_).
When no signature matches, the TypeError says why, in torch's words.

Parsing also collects the arguments that override ``__torch_function__`` (tensor subclasses and
tensor-like objects, ``self`` first), subclasses before their base classes. The generated
binding then asks ``has_torch_function`` -- true when some argument overrides or a
TorchFunctionMode is active -- and if so hands the call to ``handle_torch_function`` instead of
the dispatcher, as torch's bindings do right after parsing.
"""
import operator
import warnings

import numpy as np

from ._disable_torch_function import check_has_torch_function
from ._tensor_base import TensorBase
from .aten import python_torch_function_tls as _tf
from .aten.native.tensor_factories import wrap_scalar
from .c10 import scalar_type as st
from .c10.device import _CPU, as_device
from .c10.device import device as _device
from .c10.generator import Generator
from .c10.memory_format import memory_format
from .c10.sym import SymBool, SymFloat, SymInt
from .c10.tensor_impl import layout as _layout
from .c10.trace_log import TraceLog
from .storage import TypedStorage, UntypedStorage

__all__ = ["PythonArgParser", "PythonArgs", "FunctionSignature", "FunctionParameter", "trace", "named",
           "type_error_to_not_implemented", "set_tensor_class", "handle_torch_function",
           "handle_torch_function_method", "handle_torch_function_getter", "handle_torch_function_setter",
           "handle_torch_function_no_python_arg_parser"]

# The operators whose Tensor parameters also take Python numbers (``should_allow_numbers_as_tensors``).
NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "true_divide_",
    "floor_divide", "floor_divide_", "subtract", "subtract_", "multiply", "multiply_", "divide", "divide_",
    "to", "_to_copy", "copy_"})

# NumPy spellings accepted for some keywords: ``x.sum(axis=0)`` (``numpy_compatibility_arg_names``).
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}

_MISSING = object()

# The exact Tensor class (``THPVariableClass``): a tensor of this class never overrides, and
# checking for it first keeps the usual call fast. Set once at initialisation.
_Tensor = None


def set_tensor_class(cls):
    global _Tensor
    _Tensor = cls


# Namespace functions written in Python over their binding that take the binding's own arguments
# (``internals.cat``): an override receives them, the function the user called, as torch's
# receives ``torch.cat``.
_PUBLIC_FUNCTIONS = {}


def public_function(fn):
    """Register ``fn`` as the public face of the binding of the same name; returns ``fn``."""
    _PUBLIC_FUNCTIONS[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------------- what each type accepts
def _is_int(obj):
    """``THPUtils_checkLong``: an int or NumPy integer, not a bool."""
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, bool)


def _unpack_long(obj):
    """``THPUtils_unpackLong``: an int64, or ValueError."""
    v = operator.index(obj)
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return v


def _is_index(obj):
    """``THPUtils_checkIndex``: an int, or anything with ``__index__`` (a 0-dim integer tensor);
    a SymInt is one without being asked for its value."""
    if type(obj) is int:        # the usual answer, first
        return True
    if isinstance(obj, bool):
        return False
    if _is_int(obj) or isinstance(obj, SymInt):
        return True
    try:
        operator.index(obj)
        return True
    except TypeError:
        return False


def _is_number(obj):
    """``THPUtils_checkScalar``: a Python or NumPy number (bool included), or a symbolic one
    (``item()`` under fake tracing)."""
    return isinstance(obj, (int, float, complex, np.number, np.bool_, SymInt, SymFloat, SymBool))


def _is_scalar_like(obj):
    """A Scalar or float parameter also takes a 0-dim tensor that does not require grad."""
    return _is_number(obj) or (isinstance(obj, TensorBase) and obj.dim() == 0 and not obj._requires_grad)


def _is_int_list(obj, size):
    """An empty list, or a list whose *first* item is an int (torch looks no further here;
    the rest are checked when the list is converted); with a size (``int[2]``) also one int."""
    if isinstance(obj, (tuple, list)):
        return len(obj) == 0 or _is_index(obj[0])
    return size > 0 and _is_index(obj)


_CHECKS = {
    "Tensor": lambda p, obj: (isinstance(obj, TensorBase) or (p.numbers_as_tensors and _is_number(obj))
                             or check_has_torch_function(obj, ignore_mode=True)),    # a tensor-like
    "Scalar": lambda p, obj: _is_scalar_like(obj),
    "double": lambda p, obj: (_is_scalar_like(obj) and not isinstance(obj, complex)),
    "int64_t": lambda p, obj: _is_int(obj) or (isinstance(obj, TensorBase) and obj.dim() == 0 and not obj._requires_grad
                                               and not obj.dtype.is_floating_point and obj.dtype is not st.bool_),
    "SymInt": lambda p, obj: _is_index(obj),
    "IntArrayRef": lambda p, obj: _is_int_list(obj, p.size),
    "SymIntArrayRef": lambda p, obj: _is_int_list(obj, p.size),
    "bool": lambda p, obj: isinstance(obj, bool),
    "ScalarType": lambda p, obj: isinstance(obj, st.dtype) or isinstance(obj, type) and obj in st.PYTHON_TYPES,
    "Layout": lambda p, obj: isinstance(obj, _layout),
    "MemoryFormat": lambda p, obj: isinstance(obj, memory_format),
    "Device": lambda p, obj: _is_int(obj) or isinstance(obj, (str, _device)),
    "Generator": lambda p, obj: isinstance(obj, Generator),
    "TensorList": lambda p, obj: _is_tensor_list(p, obj, allow_none=False),
    # ``Scalar[]`` (the foreach operators' scalar lists): numbers, or 0-dim tensors, in a list or tuple
    "ScalarList": lambda p, obj: isinstance(obj, (tuple, list)) and all(_is_scalar_like(o) for o in obj),
    # ``Tensor?[] indices`` (index_put_): the binding takes tensors only, as torch's does; the
    # Nones of ``x[:, i] = v`` reach the operator from the indexing code, not through here
    "c10::List<::std::optional<Tensor>>": lambda p, obj: _is_tensor_list(p, obj, allow_none=False),
    "c10::string_view": lambda p, obj: isinstance(obj, str),
    "Storage": lambda p, obj: _is_storage(obj),
    "PyObject*": lambda p, obj: True,
}


def _is_tensor_list(p, obj, allow_none):
    """A list or tuple of tensors; any other element is an error at once, whatever overload
    might follow (``is_tensor_list_and_append_overloaded`` with ``throw_error``)."""
    if not isinstance(obj, (tuple, list)):
        return False
    for i, t in enumerate(obj):
        if not (isinstance(t, TensorBase) or allow_none and t is None or check_has_torch_function(t, True)):
            raise TypeError(f"expected Tensor as element {i} in argument {p.index}, but got {_type_name(t)}")
    return True


def _is_storage(obj):
    """``THPVariable_set_``'s Storage: an UntypedStorage or a TypedStorage."""
    return isinstance(obj, (TypedStorage, UntypedStorage))

# How a parameter's type is named in error messages (``FunctionParameter::type_name``).
_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "double": "float", "int64_t": "int", "SymInt": "int",
               "IntArrayRef": "tuple of ints", "SymIntArrayRef": "tuple of ints", "bool": "bool",
               "ScalarType": "torch.dtype", "Layout": "torch.layout", "MemoryFormat": "torch.memory_format",
               "Device": "torch.device", "Generator": "torch.Generator", "TensorList": "tuple of Tensors",
               "ScalarList": "tuple of Scalars",
               "c10::string_view": "str", "c10::List<::std::optional<Tensor>>": "tuple of Tensors",
               "Storage": "torch.Storage", "PyObject*": "object"}


def _parse_default(type_, size, text, optional_type):
    if text == "None":
        # a list parameter that is not optional (``int[1] dim=None``) reads None as an empty list
        return [] if type_ in ("IntArrayRef", "SymIntArrayRef") and not optional_type else None
    if type_ == "bool":
        return text in ("True", "true")
    if type_ in ("IntArrayRef", "SymIntArrayRef"):
        if text.startswith("{"):
            return [int(v) for v in text[1:-1].split(",") if v]
        return [int(text)] * size                       # int[2] stride=1 means [1, 1]
    if type_ == "ScalarType":
        return st.int64 if text == "torch.int64" else None
    if text.startswith("at::Reduction::"):
        # ``int reduction=Mean``: torch's parser reads this default with ``atol``, which gives 0, so
        # ``torch.binary_cross_entropy_with_logits(x, t)`` does not reduce (F.* pass it explicitly)
        return 0
    if type_ in ("Scalar", "double", "int64_t", "SymInt"):
        try:
            return int(text)
        except ValueError:
            return float(text)
    if type_ == "c10::string_view" and text[:1] in ("'", '"'):
        return text[1:-1]                               # a string literal: approximate="none"
    return text


_HEAP_TYPE = 1 << 9     # ``Py_TPFLAGS_HEAPTYPE``: a class written in Python
_TORCH_C_TYPES = ("Size", "device", "dtype", "layout", "memory_format", "Generator", "finfo", "iinfo")


def _type_name(obj):
    """A given argument's type as torch's ``py_typename`` prints it (the C ``tp_name``):
    ``Tensor``, ``int``, ``tuple``, a Python class by its name (``Fraction``), and a type written
    in C outside the builtins by its dotted name (``numpy.int64``, ``collections.OrderedDict``,
    ``numpy.dtypes.Float32DType``)."""
    if isinstance(obj, TensorBase):
        return "Tensor"
    kind = type(obj)
    if kind.__name__ in _TORCH_C_TYPES and kind.__module__.startswith("internals"):
        return f"torch.{kind.__name__}"     # written in C in torch, in Python here
    if kind.__flags__ & _HEAP_TYPE or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _arg_desc(obj):
    """...and as a signature's mismatch line shows it (``_formattedArgDesc``): ``tuple of (int,)``,
    ``list of [int, str]``."""
    if isinstance(obj, (tuple, list)) and not isinstance(obj, TensorBase):
        inner = ", ".join(_type_name(o) for o in obj)
        if isinstance(obj, list):
            return f"list of [{inner}]"
        return f"tuple of ({inner}{',' if len(obj) == 1 else ''})"
    return _type_name(obj)


def _option_types(option):
    """The type of each ``", "``-separated piece of a printed signature, as torch's
    ``_parseOption`` reads it back: the text before the last space, so ``*`` is a piece and a
    parameter with a default (``bool keepdim = False``) has the type ``bool keepdim =``."""
    types = []
    for piece in option[1:-1].split(", "):
        end = piece.rfind(" ")
        if "..." in piece:
            end -= 4
        types.append(piece[:end] if end >= 0 else piece)
    return types


def _type_matches(type_, obj):
    """``_buildType``'s test: a float takes ints, and every other type compares its name."""
    name = _type_name(obj)
    return name in ("float", "int") if type_ == "float" else name == type_


# ---------------------------------------------------------------------- signatures
class FunctionParameter:
    """One parameter of a signature string: ``IntArrayRef[1]? dim``, ``Scalar alpha=1``."""
    __slots__ = ("name", "type", "size", "allow_none", "optional", "keyword_only", "default", "check",
                 "is_tensor", "is_tensor_list", "numbers_as_tensors", "numpy_names", "index")

    def __init__(self, fmt, keyword_only, numbers_as_tensors):
        type_, _, name = fmt.partition(" ")
        self.allow_none = type_.endswith("?")
        type_ = type_.rstrip("?")
        self.size = 0
        if "[" in type_:                     # IntArrayRef[2]: a list of 2, or one int for both
            type_, size = type_[:-1].split("[")
            self.size = int(size)
        self.type = type_
        self.name, eq, default = name.partition("=")
        self.optional = bool(eq)
        self.default = _parse_default(type_, self.size, default, self.allow_none) if eq else None
        if default == "None":
            self.allow_none = True
        self.keyword_only = keyword_only
        self.numbers_as_tensors = numbers_as_tensors
        self.check = _CHECKS[type_]
        self.is_tensor = type_ == "Tensor"
        self.is_tensor_list = type_ in ("TensorList", "c10::List<::std::optional<Tensor>>")
        self.numpy_names = NUMPY_NAMES.get(self.name, ())

    def type_name(self):
        return _TYPE_NAMES[self.type]

    def __str__(self):
        return f"{self.type_name()} {self.name}" + (f" = {_default_str(self)}" if self.optional else "")


def _default_str(p):
    text = p.default
    if text is None or text == [] and p.allow_none:
        return "None"
    if isinstance(text, st.dtype):
        return f"torch.{text.name}"
    return str(text)


class FunctionSignature:
    """One overload's Python signature (``FunctionSignature``): parameters in order, ``*`` before
    the keyword-only ones."""

    def __init__(self, fmt, index):
        self.fmt = fmt
        self.index = index
        fmt, _, flag = fmt.partition("|")        # "|hidden": tried, never listed in an error
        self.hidden = flag == "hidden"
        self.name, _, rest = fmt.partition("(")
        numbers_as_tensors = self.name in NUMBERS_AS_TENSORS
        self.params, keyword_only = [], False
        for part in rest[:-1].split(", ") if rest != ")" else []:
            if part == "*":
                keyword_only = True
            else:
                self.params.append(FunctionParameter(part, keyword_only, numbers_as_tensors))
                self.params[-1].index = len(self.params) - 1     # "argument 0" in torch's messages
        self.max_args = len(self.params)
        self.min_args = sum(1 for p in self.params if not p.optional)
        self.max_pos_args = sum(1 for p in self.params if not p.keyword_only)
        self.defaults_from = self.max_args      # every parameter from here on has a default
        while self.defaults_from and self.params[self.defaults_from - 1].optional:
            self.defaults_from -= 1
        self.names = {p.name: i for i, p in enumerate(self.params)}
        # the parameters whose arguments may override __torch_function__
        self.tensor_slots = tuple(i for i, p in enumerate(self.params) if p.is_tensor or p.is_tensor_list)
        # the values of the parameters not given, by the number given (all None: the default)
        self.defaulted = [[None] * (self.max_args - n) for n in range(self.max_args + 1)]
        for i, p in enumerate(self.params):
            for alias in p.numpy_names:
                self.names.setdefault(alias, i)
        # ``x.view(2, 3)`` for ``x.view((2, 3))``: with one positional parameter that is an int list,
        # the positional arguments together may be that list
        self.varargs_intlist = self.max_pos_args == 1 and self.params[0].type in ("IntArrayRef", "SymIntArrayRef")

    def __str__(self):
        """``(Tensor other, *, Number alpha = 1)``, as torch prints a signature in errors."""
        parts, star = [], False
        for p in self.params:
            if p.keyword_only and not star:
                parts.append("*")
                star = True
            parts.append(str(p))
        return f"({', '.join(parts)})"

    def parse(self, args, kwargs, raise_exception=False, long_way=False):
        """The call's values, one per parameter (None where not given: the accessor supplies the
        default), or None if this signature does not accept the call."""
        nargs = len(args)
        if (not kwargs and self.defaults_from <= nargs <= self.max_pos_args and not self.varargs_intlist
                and not raise_exception and not long_way):
            # The usual call, ``x.add(y)``: positional arguments only, and every parameter after
            # them has a default. Their values, as the long way below makes them, or None where
            # it would find an argument of the wrong type. (Written out here: every call passes.)
            for p, obj in zip(self.params, args):
                if not ((p.is_tensor and isinstance(obj, TensorBase)) or (obj is None and p.allow_none)
                        or p.check(p, obj)):
                    if not _overrides(p, obj):
                        return None
                    return self.parse(args, kwargs, long_way=True)      # which notes the overriding argument
            return [*args, *self.defaulted[nargs]]
        if nargs > self.max_pos_args and not self.varargs_intlist:
            if raise_exception:
                self._extra_args(nargs)
            return None
        values = []
        used_kwargs = 0
        arg_pos = 0
        for i, p in enumerate(self.params):
            is_kwd = arg_pos >= nargs
            if not is_kwd:
                if p.keyword_only:
                    if raise_exception:
                        self._extra_args(nargs)
                    return None
                obj = args[arg_pos]
            elif kwargs:
                obj = kwargs.get(p.name, _MISSING)
                for alias in p.numpy_names:
                    if obj is _MISSING:
                        obj = kwargs.get(alias, _MISSING)
                if obj is not _MISSING:
                    used_kwargs += 1
            elif i >= self.defaults_from:     # nothing more given, nothing more needed (``alpha``)
                values += [None] * (self.max_args - i)
                break
            else:
                obj = _MISSING
            if obj is _MISSING:
                if not p.optional:
                    if raise_exception:
                        self._missing_args(i)
                    return None
                values.append(None)
            elif obj is None and p.allow_none:
                values.append(None)
            elif (p.is_tensor and isinstance(obj, TensorBase)) or p.check(p, obj):   # the usual case first
                values.append(obj)
            elif _overrides(p, obj):
                values = values if type(values) is _WithOverrides else _WithOverrides(values)
                values.append(obj)
                values.others.append(obj)
            elif self.varargs_intlist and i == 0 and not is_kwd and _is_int_list(args, p.size):
                values.append(args)           # all positional arguments are the list
                arg_pos = nargs
                continue
            elif raise_exception:
                where = "" if is_kwd else f" (position {arg_pos + 1})"
                if (not is_kwd and p.type in ("IntArrayRef", "SymIntArrayRef") and isinstance(obj, (tuple, list))
                        and obj):
                    # torch's int-list check names the positional item it stopped at (the first)
                    raise TypeError(f"{self.name}(): argument '{p.name}'{where} must be {p.type_name()}, but found "
                                    f"element of type {_type_name(obj[0])} at pos 0")
                raise TypeError(f"{self.name}(): argument '{p.name}'{where} must be {p.type_name()}, "
                                f"not {_type_name(obj)}")
            else:
                return None
            if not is_kwd:
                arg_pos += 1
        if arg_pos < nargs:     # x.view((2, 3), 1): the list was given whole, so 1 is one too many
            if raise_exception:
                self._extra_args(nargs)
            return None
        if kwargs and used_kwargs < len(kwargs):
            if raise_exception:
                self._extra_kwargs(kwargs, nargs)
            return None
        return values

    # ------------------------------------------------------------------ errors, in torch's words
    def _extra_args(self, nargs):
        if self.min_args != self.max_pos_args:
            raise TypeError(f"{self.name}() takes from {self.min_args} to {self.max_pos_args} positional "
                            f"arguments but {nargs} were given")
        raise TypeError(f"{self.name}() takes {self.max_pos_args} positional argument"
                        f"{'' if self.max_pos_args == 1 else 's'} but {nargs} {'was' if nargs == 1 else 'were'} given")

    def _missing_args(self, i):
        missing = [f'"{p.name}"' for p in self.params[i:] if not p.optional]
        # torch's message says "arguments" for one missing argument (and "argument" for several)
        raise TypeError(f"{self.name}() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")

    def _extra_kwargs(self, kwargs, nargs):
        for key in kwargs:
            i = self.names.get(key)
            if i is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if i < nargs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
        raise TypeError("invalid keyword arguments")

    def _mismatch(self, args, kwargs):
        """The "didn't match" line under this signature in an error listing several
        (``format_invalid_args``), or None. Torch reads the printed signature back, so it
        counts ``*`` and the parameters with defaults as pieces, and never matches the latter."""
        option = str(self)
        types = _option_types(option)
        got = len(args) + len(kwargs or ())
        variadic = "..." in option
        if not (got == len(types) or variadic and got > len(types)):
            return None
        if kwargs:
            names = [t.rpartition(" ")[2] for t in option[1:-1].split(", ")]
            wrong = [k for k in kwargs if k not in names[max(len(names) - len(kwargs), 0):]]
            if wrong:
                return "some of the keywords were incorrect: " + ", ".join(wrong)
        shown = []
        for i, obj in enumerate(list(args) + list((kwargs or {}).values())):
            type_ = types[i] if i < len(types) else types[-1]
            shown.append(_arg_desc(obj) if _type_matches(type_, obj) else f"!{_arg_desc(obj)}!")
        return f"some of the arguments have invalid types: ({', '.join(shown)})"


class PythonArgs:
    """A matched call (``PythonArgs``): which signature (``idx``), and accessors that convert each
    argument to what the operator's schema type wants. ``PythonArgParser.parse`` fills in the
    fields: every operator call makes one, and a Python ``__init__`` would cost more than that.
    ``overloaded_args`` lists the arguments that override ``__torch_function__`` (or is None);
    ``has_torch_function`` says whether the call goes to ``handle_torch_function``."""
    __slots__ = ("idx", "signature", "values", "overloaded_args", "has_torch_function")

    def _get(self, i):
        v = self.values[i]
        return self.signature.params[i].default if v is None else v

    def tensor(self, i):
        v = self.values[i]
        return v if v is None or isinstance(v, TensorBase) else wrap_scalar(v)

    def tensorlist(self, i):
        """``out=(values, indices)``: the tensors, as given."""
        return self.values[i]

    def is_none(self, i):
        """``isNone``: the argument was not given, or given as None (an ``out=`` not asked for)."""
        return self.values[i] is None

    def scalar(self, i):
        v = self.values[i]
        if v is None:           # the default (``alpha`` on every add): a valid number already
            return self.signature.params[i].default
        if isinstance(v, TensorBase):
            return v.item()                          # a 0-dim tensor given for a number
        return v.item() if isinstance(v, (np.number, np.bool_)) else st.unpack_int_scalar(v)

    def to_double(self, i):
        v = self._get(i)
        v = v.item() if isinstance(v, (TensorBase, np.number, np.bool_)) else v
        return None if v is None else float(v)

    def to_int64(self, i):
        v = self._get(i)
        return None if v is None else _unpack_long(v)

    def to_symint(self, i):
        """``toSymInt``: a symbol (a traced size, ``x.shape[0]``) stays one, with no guard on its
        value; any other int as ``to_int64``."""
        v = self._get(i)
        return v if isinstance(v, SymInt) else self.to_int64(i)

    def to_bool(self, i):
        return self._get(i)

    def intlist(self, i):
        v = self._get(i)
        if v is None:
            return None
        if not isinstance(v, (tuple, list)):
            return [_unpack_size(v, self.signature.params[i])] * max(self.signature.params[i].size, 1)
        out = []
        for pos, item in enumerate(v):
            if type(item) is int and -(1 << 63) <= item < (1 << 63):    # the usual size: nothing to convert
                out.append(item)
                continue
            try:
                out.append(_unpack_size(item, self.signature.params[i]))
            except (TypeError, ValueError) as e:
                error = (f'type must be tuple of ints,but got {_type_name(item)}"' if isinstance(e, TypeError)
                         else str(e))      # (torch's message goes on with a C++ stack trace)
                sig = self.signature
                raise TypeError(f"{sig.name}(): argument '{sig.params[i].name}' failed to unpack the object at "
                                f"pos {pos + 1} with error \"{error}") from None
        return out

    def scalarlist(self, i):
        """``scalarlist``: each number as ``scalar`` reads one."""
        return [v.item() if isinstance(v, (TensorBase, np.number, np.bool_)) else st.unpack_int_scalar(v)
                for v in self.values[i]]

    def scalartype(self, i):
        v = self._get(i)
        return st.PYTHON_TYPES.get(v, v) if v is not None else None

    def scalartype_with_default(self, i, default):
        v = self.scalartype(i)
        return default if v is None else v

    def device(self, i):
        """A device name or index as a device object (None stays None: the operator picks)."""
        v = self._get(i)
        return None if v is None else as_device(v)

    def device_with_default(self, i):
        """``deviceWithDefault``: a factory's device, the default tensor type's device if none is
        given (here always the CPU: ``set_default_device`` acts through its DeviceContext mode,
        which fills ``device=`` before the arguments are parsed)."""
        v = self._get(i)
        return _CPU if v is None else as_device(v)

    def value(self, i):
        """Layout, MemoryFormat, Generator, strings: passed as they are."""
        return self._get(i)


def _overrides(p, obj):
    """torch's ``FunctionParameter::check`` takes, for any parameter, an object that overrides
    ``__torch_function__`` (an fx Proxy as ``alpha=``), so that it is the one to handle the call.
    Tensors keep to the tensor parameters here (a tensor subclass in a number's place would pick
    another overload than the one its plain tensor picks)."""
    return not p.is_tensor and not isinstance(obj, TensorBase) and check_has_torch_function(obj, ignore_mode=True)


class _WithOverrides(list):
    """Parsed values among which some non-tensor parameter got an overriding object (``others``)."""

    def __init__(self, values):
        super().__init__(values)
        self.others = []


class PythonArgParser:
    """All signatures of one Python name, tried in order (``PythonArgParser``)."""

    def __init__(self, fmts):
        self.signatures = [FunctionSignature(fmt, i) for i, fmt in enumerate(fmts)]
        self.name = self.signatures[0].name

    def parse(self, args, kwargs, self_=None):
        """The matched call (``self_``: a method's tensor, the first that may override)."""
        for sig in self.signatures:
            values = sig.parse(args, kwargs)
            if values is not None:
                if _trace_log.entries is not None:      # a tracer listens (checked here: every call passes)
                    _trace_log.add((self.name, sig.fmt))
                matched = PythonArgs()
                matched.idx, matched.signature, matched.values = sig.index, sig, values
                # the usual call has exact tensors only: one type test per tensor argument
                overloaded = None
                if self_ is not None and type(self_) is not _Tensor:
                    overloaded = _append_overloaded(self_, overloaded)
                for i in sig.tensor_slots:
                    v = values[i]
                    if type(v) is not _Tensor and v is not None:
                        overloaded = _append_overloaded(v, overloaded)
                if type(values) is _WithOverrides:
                    for v in values.others:
                        overloaded = _append_overloaded(v, overloaded)
                matched.overloaded_args = overloaded
                # a mode on this thread? (``any_mode_enabled()``, written out)
                mode = _tf.threads_with_mode[0] != 0 and _tf.tls.mode_enabled
                matched.has_torch_function = overloaded is not None or mode
                return matched
        self._raise(args, kwargs)

    def _raise(self, args, kwargs):
        """A single plausible signature (by the number of arguments) explains itself; otherwise
        torch lists them all (``print_error``, ``format_invalid_args``)."""
        n = len(args) + len(kwargs or ())
        plausible = [s for s in self.signatures if s.min_args <= n <= s.max_args and not s.hidden]
        if len(self.signatures) == 1 or len(plausible) == 1:
            (plausible or self.signatures)[0].parse(args, kwargs, raise_exception=True)
        given = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in (kwargs or {}).items()])
        if kwargs and not args:      # ``_argDesc`` trims the last ", " only when there are positional arguments
            given += ", "
        head = f"{self.name}() received an invalid combination of arguments - got ({given}), but expected"
        if len(self.signatures) == 1:
            raise TypeError(f"{head} {self.signatures[0]}")
        lines = [f"{head} one of:"]
        for sig in (s for s in self.signatures if not s.hidden):
            lines.append(f" * {sig}")
            why = sig._mismatch(args, kwargs)
            if why is not None:
                lines.append(f"      didn't match because {why}")
        raise TypeError("\n".join(lines) + "\n")


def named(table):
    """A generated table of bindings, each function named as Python sees it (``sum``, not
    ``THPVariable_sum``), as torch's ``PyMethodDef`` entries name theirs."""
    for name, fn in table.items():
        if not name.startswith("__"):
            fn.__name__ = fn.__qualname__ = name
    return table


def type_error_to_not_implemented(fn, name):
    """``x + "a"``: a binary dunder returns NotImplemented on a TypeError, so that Python can try the
    other operand's method (torch's ``TypeError_to_NotImplemented_``)."""
    def dunder(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = dunder.__qualname__ = name
    dunder.__wrapped__ = fn
    return dunder


# ---------------------------------------------------------------------- __torch_function__
def append_overloaded_arg(overloaded, obj):
    """Add ``obj`` to the arguments whose ``__torch_function__`` will be tried
    (``append_overloaded_arg``): one per class, a subclass before its base classes, otherwise in
    the order given (NumPy's rule for ``__array_function__``, NEP 18). Returns the list."""
    kind = type(obj)
    if overloaded is None:
        return [obj]
    if any(type(other) is kind for other in overloaded):
        return overloaded
    at = next((j for j, other in enumerate(overloaded) if issubclass(kind, type(other))), len(overloaded))
    overloaded.insert(at, obj)
    return overloaded


def _append_overloaded(obj, overloaded):
    """A tensor argument, or each tensor of a list, appended if it overrides
    (``is_tensor_and_append_overloaded``); ``overloaded`` stays None until one does."""
    if isinstance(obj, (list, tuple)):
        for item in obj:
            if type(item) is not _Tensor and item is not None:
                overloaded = _append_overloaded(item, overloaded)
        return overloaded
    if check_has_torch_function(obj, ignore_mode=True):
        return append_overloaded_arg(overloaded, obj)
    return overloaded


def handle_torch_function(r, self, args, kwargs, torch_api, module_name):
    """A parsed call that an argument or a mode overrides, handed to them instead of the
    dispatcher (``handle_torch_function`` in ``python_arg_parser.cpp``). They receive the public
    function by its name on ``torch_api``: the Tensor class for a method (given as None: the
    registered class), the function table for ``internals.add`` and the like."""
    name = r.signature.name
    api = _Tensor if torch_api is None else torch_api
    func = _PUBLIC_FUNCTIONS.get(name, api[name]) if isinstance(api, dict) else getattr(api, name)
    if self is not None:
        args = (self, *args)
    return handle_torch_function_no_python_arg_parser(r.overloaded_args or [], args, kwargs or None, name, func,
                                                      module_name)


def handle_torch_function_method(self, name, args=(), kwargs=None):
    """The same for a Tensor method that parses nothing (``x.t()``) or is written by hand
    (``item``): ``self`` is the overriding argument, even a plain tensor under a mode (its
    class's default override runs the method if the mode declines)."""
    return handle_torch_function_no_python_arg_parser([self], (self, *args), kwargs or None, name,
                                                      getattr(_Tensor, name), "internals.Tensor")


def handle_torch_function_getter(self, name):
    """A property read (``x.grad``) that ``self`` or a mode overrides: they receive the
    property's getter, ``Tensor.grad.__get__`` (``handle_torch_function_getter``)."""
    getter = getattr(_Tensor, name).__get__
    return handle_torch_function_no_python_arg_parser([self], (self,), None, "__get__", getter,
                                                      f"internals.Tensor.{name}")


def handle_torch_function_setter(self, name, value):
    """A property write (``x.grad = g``) that ``self`` or a mode overrides: they receive the
    property's setter, ``Tensor.grad.__set__``, with ``(self, value)``
    (``handle_torch_function_setter``)."""
    setter = getattr(_Tensor, name).__set__
    handle_torch_function_no_python_arg_parser([self], (self, value), None, "__set__", setter,
                                               f"internals.Tensor.{name}")


def handle_torch_function_no_python_arg_parser(overloaded_args, args, kwargs, func_name, torch_api_function,
                                               module_name):
    """Try the mode on top of the stack, then each overriding argument in order, until one
    returns something other than NotImplemented. ``kwargs`` is None when the call had none: the
    handlers then get three arguments, as torch's C++ passes them."""
    types = tuple(type(arg) for arg in overloaded_args)
    extra = () if kwargs is None else (kwargs,)
    result, mode = NotImplemented, None
    if _tf.tls.mode_enabled:
        mode = _tf.pop_stack()      # off the stack while it runs, so its own calls reach the modes below
        try:
            method = mode.__torch_function__
            if getattr(method, "__self__", None) is not mode:
                raise RuntimeError("Defining your mode's `__torch_function__` as a classmethod is not supported, "
                                   "please make it a plain method")
            result = method(torch_api_function, types, args, *extra)
        finally:
            _tf.push_onto_stack(mode)
    if result is NotImplemented:
        for arg in overloaded_args:
            method = arg.__torch_function__
            if getattr(method, "__self__", None) is arg:
                warnings.warn("Defining your `__torch_function__` as a plain method is deprecated and will be an "
                              "error in future, please define it as a classmethod.", UserWarning, stacklevel=3)
            result = method(torch_api_function, types, args, *extra)
            if result is not NotImplemented:
                break
    if result is NotImplemented:
        raise TypeError(_dispatch_failed(f"{module_name}.{func_name}", mode, overloaded_args))
    return result


def _dispatch_failed(name, mode, overloaded_args):
    """torch's message when every handler returned NotImplemented."""
    handlers = ([f"  - mode object {mode!r}\n"] if mode is not None else [])
    handlers += [f"  - tensor subclass {type(arg)!r}\n" for arg in overloaded_args]
    return (f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned NotImplemented:\n\n"
            + "".join(handlers) + "\nFor more information, try re-running with TORCH_LOGS=not_implemented")


# ---------------------------------------------------------------------- tracing the parser
_trace_log = TraceLog()


def trace():
    """Record each parsed call: ``(name, the signature that matched)``."""
    return _trace_log.recording()


def _unpack_size(obj, param):
    """One int of an int list: a ``SymInt[]`` keeps a symbol as it is (torch's ``symintlist``), so
    a traced size is passed on, not decided; an ``int[]`` asks each for its value."""
    if isinstance(obj, SymInt) and param.type == "SymIntArrayRef":
        return obj
    return _unpack_long(obj)
