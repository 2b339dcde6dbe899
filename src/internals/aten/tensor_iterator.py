"""TensorIterator: from an op's operands to the loop a kernel runs.

Mirrors ``aten/src/ATen/TensorIterator.cpp``. A kernel describes its operands with a
``TensorIteratorConfig`` (outputs first, then inputs, and what may be promoted or cast), and
``build()`` runs torch's steps in torch's order:

1. ``compute_mem_overlaps``: refuse an output that overlaps itself or an input partially.
2. ``compute_shape``: broadcast the inputs' shapes; a given output of other sizes is resized, unless it is an input.
3. ``compute_types``: the common device and dtype; a given output must accept the common dtype;
   on the CPU, inputs of another dtype are replaced by copies in the common dtype.
4. ``fast_set_up``: if every operand has that shape and they share a dense layout, the output
   takes it and the whole op is one flat loop. Otherwise:
5. ``compute_strides`` (stride 0 along broadcast dims), ``reorder_dimensions`` (sort dims by
   ascending stride, ties going to the first operand that can break them) and
   ``allocate_or_resize_outputs`` (a new output is laid out in that order, so it inherits its
   inputs' layout).
6. ``cast_to_opmath`` (ours, not torch's): the loop reads and writes tensors in the computation
   dtype (``opmath_type``: float32 for the 16-bit floats), where torch converts element by
   element inside its loop. An output of another dtype gets a temporary, copied back after the
   loop (torch's ``cast_outputs``).
7. ``coalesce_dimensions``: merge neighbouring dims that every operand walks as one.

A binary operator's build is remembered as a plan (``BinaryOpConfig.build``): the same operand
layouts, met again, skip steps 2-7, as their outcome is known (but for step 3's cast of a wrapped
Python number, the 2 of ``x * 2``, which is repeated for each call's own number).

``for_each(loop)`` then hands the loop the operands' buffers, the sizes and the strides.
A CUDA loop first asks ``can_use_32bit_indexing`` and, if not, runs ``with_32bit_indexing``'s
pieces one by one (torch's ``SplitUntil32Bit``), so its kernels index with 32-bit integers.
Strides here are in elements (torch keeps bytes), and dimension 0 is the fastest-moving one,
as in torch after reordering.
"""
import functools
import math
import operator
import sys

import numpy as np

from ..c10 import scalar_type as st
from ..c10.tensor_impl import contiguous_strides, is_channels_last, is_contiguous, is_non_overlapping_and_dense, strided
from . import dispatcher
from .empty_tensor import _meta, _meta_blocks, empty_planned, empty_strided_generic

__all__ = ["TensorIteratorConfig", "TensorIterator", "broadcast_shapes", "Geometry", "geometry", "output_layout",
           "scratch_like", "coalesce", "check_no_overlap", "common_device", "flat_geometry",
           "can_use_32bit_indexing", "get_dim_to_split", "with_32bit_indexing", "running_kernel_name"]

INT32_MAX = 2**31 - 1       # the largest index or byte offset a 32-bit-indexed CUDA kernel reaches


# The name torch's CPU and CUDA kernels give their dtype switch (``AT_DISPATCH_*``), which its
# refusal of a dtype (uint16, uint32, uint64: "limited support") quotes; by operator, where it
# is not ``{op}_{device}``. ``{dev}`` is the device type; a dispatch stub shared by two operators
# (``sub`` runs ``add_stub``) has no device in its name.
_KERNEL_NAMES = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "pow": "pow", "square": "pow", "max": "max_all",
    "min": "min_all", "max.dim": "max_{dev}", "min.dim": "min_{dev}", "amax": "max_values_{dev}",
    "amin": "min_values_{dev}", "fmax": "maximum_{dev}", "fmin": "minimum_{dev}", "sgn": "sign_{dev}",
    "floor_divide": "div_floor_{dev}", "relu": "clamp_min_scalar_{dev}", "clamp": "clamp_scalar_{dev}",
    "clamp.Tensor": "clamp_{dev}", "clamp_min": "clamp_min_scalar_{dev}", "clamp_max": "clamp_max_scalar_{dev}",
    "bitwise_left_shift": "lshift_{dev}", "bitwise_right_shift": "rshift_{dev}", "addcmul": "addcmul_{dev}_out",
    "lerp": "lerp_kernel_scalar", "lerp.Tensor": "lerp_kernel_tensor",
}


def running_kernel_name(device):
    """The name torch's kernel for the operator now running would refuse a dtype with: the
    innermost operator the dispatcher is running, found up the stack (this is the refusal's
    road only, so the calls pay nothing for it)."""
    frame = sys._getframe(1)
    while frame is not None:
        handle = frame.f_locals.get("self") if frame.f_code.co_filename == dispatcher.__file__ else None
        if isinstance(handle, dispatcher.OperatorHandle):
            return _kernel_name(handle, frame.f_locals.get("args", ()), frame.f_locals.get("kwargs") or {},
                                device.type)
        frame = frame.f_back
    return "unknown"


# the rounding kernels' names in their float8 refusal (their loops for other dtypes are ``*_cpu``)
_FLOAT8_KERNEL_NAMES = {f"{name}_cpu": f"{name}_vml_cpu" for name in ("ceil", "floor", "trunc", "round")}


def _kernel_name(handle, args, kwargs, dev):
    base = handle.name.partition("::")[2].partition(".")[0].strip("_")     # ``__lshift__``, ``add_``
    if base == "div" and handle.overload.startswith(("Tensor_mode", "Scalar_mode", "out_mode")):
        mode = kwargs.get("rounding_mode")
        base = "div_true" if mode is None else f"div_{mode}"
    if base == "clamp" and handle.overload in ("", "out"):     # one bound given: torch's kernel for that bound
        bounds = (*args[1:3], None, None)[:2]
        bounds = (kwargs.get("min", bounds[0]), kwargs.get("max", bounds[1]))
        base = "clamp_min" if bounds[1] is None else "clamp_max" if bounds[0] is None else base
    overload = f"{base}.{handle.overload}" if handle.overload in ("dim", "Tensor") else base
    name = _KERNEL_NAMES.get(overload, _KERNEL_NAMES.get(base, f"{base}_{{dev}}"))
    return name.format(dev=dev)


class TensorIteratorConfig:
    """``TensorIteratorConfig``: the operands (outputs first) and the rules ``build()`` follows.

    An output may be ``None``: ``build()`` allocates it (in ``dtype`` if given, as a comparison's
    bool output, else in the common dtype). Every setter returns the config, as torch's do.
    """

    # The rules' defaults, torch's, as class attributes: a setter overrides one for its config.
    check_mem_overlap_ = True
    promote_inputs_to_common_dtype_ = False
    promote_integer_inputs_to_float_ = False
    cast_common_dtype_to_outputs_ = False
    enforce_safe_casting_to_output_ = False
    check_all_same_dtype_ = False       # torch's default is true; here the configs that rely on it say so
    resize_outputs_ = True
    is_reduction_ = False
    reduce_dims, in_memory_order = (), True
    compute_in_opmath_ = True
    only_moves_ = False        # ours: only copies and fills take complex32 and uint16-64 (see ``for_each``)
    original_scalar_inputs = ()
    static_shape = None

    def __init__(self):
        self.outputs, self.output_dtypes, self.inputs = [], [], []
        self.given_outputs = []         # the outputs that are tensors, not None

    def add_output(self, tensor, dtype=None):
        self.outputs.append(tensor)
        self.output_dtypes.append(dtype)
        if tensor is not None:
            self.given_outputs.append(tensor)
        return self

    def add_input(self, tensor):
        self.inputs.append(tensor)
        return self

    add_const_input = add_input     # torch tells read-only inputs apart; nothing here writes an input

    def check_mem_overlap(self, check=True):
        self.check_mem_overlap_ = check
        return self

    def promote_inputs_to_common_dtype(self, promote=True):
        self.promote_inputs_to_common_dtype_ = promote
        return self

    def promote_integer_inputs_to_float(self, promote=True):
        """Integer and bool inputs compute in the default float dtype (``exp``, true division)."""
        self.promote_integer_inputs_to_float_ = promote
        return self

    def cast_common_dtype_to_outputs(self, cast=True):
        self.cast_common_dtype_to_outputs_ = cast
        return self

    def enforce_safe_casting_to_output(self, enforce=True):
        self.enforce_safe_casting_to_output_ = enforce
        return self

    def check_all_same_dtype(self, check=True):
        """A given output must have the input's dtype: no cast into ``out=`` (``neg``, ``floor``)."""
        self.check_all_same_dtype_ = check
        return self

    def resize_outputs(self, resize=True):
        self.resize_outputs_ = resize
        return self

    def is_reduction(self, dims, in_memory_order=True):
        """A reduction over ``dims`` of the one input (see ``_reduction_geometry``)."""
        self.is_reduction_ = True
        self.reduce_dims, self.in_memory_order = dims, in_memory_order
        return self

    def only_moves(self, moves=True):
        """Ours: the loop only moves or stores elements (a copy, a fill), so complex32's words,
        which no arithmetic loop reads as numbers, may pass, and so may uint16, uint32 and
        uint64, which torch's arithmetic kernels mostly refuse."""
        self.only_moves_ = moves
        return self

    def compute_in_opmath(self, opmath=True):
        """Ours: cast the operands to ``opmath_type`` before the loop (off for ``copy_``, whose loop
        converts between dtypes itself)."""
        self.compute_in_opmath_ = opmath
        return self

    def read_original_scalar(self, *input_indices):
        """These one-element inputs are read at opmath precision from their original dtype, not
        rounded to the common dtype first (torch's ``original_scalar_value``, see ``binary``)."""
        self.original_scalar_inputs = input_indices
        return self

    def declare_static_shape(self, shape):
        """The iteration shape, given rather than broadcast (a reduction's input shape)."""
        self.static_shape = tuple(shape)
        return self

    def build(self):
        return TensorIterator(self).build()


class BinaryOpConfig(TensorIteratorConfig):
    """The config of every binary operator (``build_borrowing_binary_op``): one output, two
    inputs promoted to their common dtype, which is cast to the output if the output can hold it.
    Its rules are class attributes and its lists are filled at once, rather than by six setter
    calls: this config is made on every elementwise binary call, where Python calls are the cost."""

    promote_inputs_to_common_dtype_ = True
    cast_common_dtype_to_outputs_ = True
    enforce_safe_casting_to_output_ = True

    def __init__(self, out, a, b, out_dtype=None):
        self.outputs, self.output_dtypes, self.inputs = [out], [out_dtype], [a, b]
        self.given_outputs = [] if out is None else [out]
        self.original_scalar_inputs = ()    # set here, so that ``read_original_scalar`` adds no rule

    def build(self):
        """``TensorIterator(self).build()``, or what an earlier build with operands of the same
        layouts left (its plan, see ``TensorIterator.plan``).

        Everything ``build()`` decides but the overlap check depends only on the operands' sizes,
        strides, offsets, dtypes, devices and layouts, and on the config's rules: the same facts
        give the same shape, dtypes, output layout and loop geometry. torch recomputes them in
        C++ on every call; in Python the seven steps cost more than a one-element loop, so the
        answer is looked up instead, and only a new tensor is allocated. A config whose rules a
        setter changed (an instance attribute beside the four operand lists and the original
        scalars, ``mul``'s ``read_original_scalar``) is built afresh.
        """
        if len(self.__dict__) != 5:
            return TensorIterator(self).build()
        given, key, plan = self.given_outputs, None, None
        try:
            key = ("plan", self.output_dtypes[0], st._default_dtype, self.original_scalar_inputs,
                   *(map(_layout_facts, given + self.inputs) if given else _two_layout_facts(*self.inputs)))
            plan = _layouts[key]
        except (KeyError, TypeError, RuntimeError):
            # KeyError: a new layout; TypeError: a traced size, which has no hash; RuntimeError:
            # a sparse operand, which has no strides (``build`` refuses it with torch's message)
            pass
        if plan is not None:
            if given and self.check_mem_overlap_:
                compute_mem_overlaps(self)      # the one step that reads the storages themselves
            return TensorIterator.following(self, plan)
        return _built_and_kept(self, key)


class ReduceOpConfig(TensorIteratorConfig):
    """The config of ``TensorIterator.reduce_op`` (``out`` and ``a``, a reduction over ``dims``
    with ``a``'s shape as the iteration shape, the common dtype cast to ``out``), its rules and
    operands set at once as ``BinaryOpConfig``'s: every reduction makes one."""

    check_mem_overlap_ = False
    resize_outputs_ = False
    is_reduction_ = True
    cast_common_dtype_to_outputs_ = True

    def __init__(self, out, a, dims, out_dtype=None, in_memory_order=True):
        self.outputs, self.output_dtypes, self.inputs = [out], [out_dtype], [a]
        self.given_outputs = [out]
        self.reduce_dims, self.in_memory_order = dims, in_memory_order
        self.static_shape = a._impl.sizes

    def build(self):
        """``TensorIterator(self).build()``, or the plan of an earlier build over operands of the
        same layouts and the same dims (as ``BinaryOpConfig.build``; the output is given, so
        nothing is allocated). Every ``x.sum()`` comes here, and its geometry is then looked up."""
        if len(self.__dict__) != 7:
            return TensorIterator(self).build()
        key = plan = None
        try:
            key = ("reduce", tuple(self.reduce_dims), self.in_memory_order, self.output_dtypes[0],
                   *map(_layout_facts, self.outputs + self.inputs))
            plan = _layouts[key]
        except (KeyError, TypeError, RuntimeError):     # as in ``BinaryOpConfig.build``
            pass
        if plan is not None:
            return TensorIterator.following(self, plan)
        return _built_and_kept(self, key)


def _built_and_kept(config, key):
    """``TensorIterator(config).build()``, its plan kept under ``key`` (None: no key) for the next call."""
    it = TensorIterator(config).build()
    plan = it.plan()
    if plan is not None and key is not None:
        _layouts.put(key, plan)
    return it


class TensorIterator:
    """An op's operands, made ready for one loop by ``build()`` (see the module docstring).

    After ``build()``: ``outputs`` and ``inputs`` as the loop reads them (in the computation
    dtype), ``shape``, ``common_dtype`` and ``compute_dtype`` (its ``opmath_type``), ``device``,
    and ``geometry`` (the coalesced sizes and strides). ``result`` is the output the caller gets back.
    """

    # What ``build()`` fills in, None until then (class attributes: nothing to set per iterator).
    shape = perm = geometry = common_dtype = compute_dtype = device = output_strides = result = None
    fast = False
    will_resize = ()        # given outputs of other sizes, resized by ``allocate_or_resize_outputs``

    def __init__(self, config):
        self.config = config
        self.outputs = list(config.outputs)
        self.inputs = list(config.inputs)
        # torch's ``OperandInfo::validate``: a sparse operand reaches an iterator when a structured
        # operator without a kernel of its layout runs its dense one (``exp`` of a CSR tensor)
        for t in config.given_outputs:
            if t._impl.layout is not strided:
                raise RuntimeError(f"unsupported tensor layout: {t._impl.layout.cpp_name}")
        for t in self.inputs:
            if t is not None and t._impl.layout is not strided:
                raise RuntimeError(f"unsupported tensor layout: {t._impl.layout.cpp_name}")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def binary_op(cls, out, a, b):
        """``build_borrowing_binary_op``: promote both inputs to their common dtype, and write it
        into ``out`` if its dtype can hold it."""
        return cls.binary_config(out, a, b).build()

    @classmethod
    def binary_float_op(cls, out, a, b):
        """``build_borrowing_binary_float_op``: as ``binary_op``, integers computed as floats (``div``)."""
        return cls.binary_config(out, a, b).promote_integer_inputs_to_float().build()

    @classmethod
    def comparison_op(cls, out, a, b):
        """``build_borrowing_comparison_op``: the inputs promoted, a bool output."""
        return cls.binary_config(out, a, b, out_dtype=st.bool_).build()

    @staticmethod
    def binary_config(out, a, b, out_dtype=None):
        """The config ``binary_op`` builds, for a kernel that adds a rule of its own first."""
        return BinaryOpConfig(out, a, b, out_dtype)

    @classmethod
    def unary_op(cls, out, a):
        """``build_borrowing_unary_op``: the output in the input's dtype, which a given ``out``
        must have too."""
        return (TensorIteratorConfig().add_output(out).add_const_input(a).cast_common_dtype_to_outputs()
                .check_all_same_dtype().build())

    @classmethod
    def unary_force_boolean_op(cls, out, a):
        """``build_borrowing_unary_force_boolean_op``: a bool output, the input read as it is
        (``signbit``, ``isnan``)."""
        return TensorIteratorConfig().add_output(out, st.bool_).add_const_input(a).build()

    @classmethod
    def unary_float_op(cls, out, a):
        """``build_borrowing_unary_float_op``: integer inputs computed in the default float dtype."""
        return (TensorIteratorConfig().add_output(out).add_const_input(a).promote_inputs_to_common_dtype()
                .promote_integer_inputs_to_float().cast_common_dtype_to_outputs()
                .enforce_safe_casting_to_output().build())

    @classmethod
    def nullary_op(cls, out):
        """``nullary_op``: one output, no inputs (``fill_``). Writing one value to an element
        reachable twice is harmless, so no overlap check (``Fill.cpp`` turns it off too)."""
        return (TensorIteratorConfig().add_output(out).check_mem_overlap(False).resize_outputs(False)
                .only_moves().build())

    @classmethod
    def reduce_op(cls, out, a, dims, *, out_dtype=None, in_memory_order=True):
        """``reduce_op``: the contiguous ``out`` (allocated by the caller) from ``a`` over ``dims``,
        with no memory overlap check (torch's ``set_check_mem_overlap(false)``: a reduction's
        ``out`` is checked, or made anew, by its meta step).

        The loop gets the input's kept dims (which index the output) and reduced dims apart; see
        ``_reduction_geometry``. ``out_dtype`` is the output's dtype when it is not the input's
        (an index for argmax): no temporary then.
        """
        return ReduceOpConfig(out, a, dims, out_dtype, in_memory_order).build()

    # ------------------------------------------------------------------ build
    def build(self):
        config = self.config
        if config.check_mem_overlap_:
            self.compute_mem_overlaps()
        self.compute_shape()
        self.compute_types()
        if not config.is_reduction_ and not self.fast_set_up():
            self.compute_strides()
            self.reorder_dimensions()
            self.allocate_or_resize_outputs()
        self.result = self.outputs[0]
        if config.compute_in_opmath_:
            self.cast_to_opmath()
        self.coalesce_dimensions()
        return self

    # ------------------------------------------------------------------ plans
    def plan(self):
        """What ``build()`` decided, to be followed by a later build over operands of the same
        layouts (``BinaryOpConfig.build``), or None when the build did more than decide: cast a
        tensor input, resize a given output, or compute into a temporary. A wrapped number cast
        to the common dtype (the 2 of ``x * 2``) is part of the plan: the cast is repeated."""
        config = self.config
        if self.will_resize or self.geometry is None or self.result is not self.outputs[0]:
            return None
        casts = []
        for k, x in enumerate(self.inputs):
            if x is not config.inputs[k]:
                if not self._cast_number(config.inputs[k], x):
                    return None
                casts.append((k, x._impl.dtype))
        fresh = None if config.given_outputs else self.result._impl.dtype
        decided = {name: getattr(self, name, None) for name in _DECIDED}
        return decided, fresh, self.result._impl.storage.nbytes(), tuple(casts)

    def _cast_number(self, given, used):
        """Whether input ``used`` is the CPU wrapped number ``given`` cast once, to the common
        dtype (``compute_types``' copy). Its cast is a host conversion that leaves the layout as
        it was, so a plan repeats it. (Cast twice, through the common dtype to the compute one,
        it is left to ``build()``: one cast straight to float32 would round otherwise.)"""
        impl = used._impl
        return (bool(given._impl.is_wrapped_number) and impl.device.type == "cpu" and not impl.sizes
                and impl.dtype is self.common_dtype and self.compute_dtype is self.common_dtype)

    @classmethod
    def following(cls, config, plan):
        """The iterator ``config`` builds, from a remembered ``plan`` of the same operand layouts:
        its decisions taken as they are, only a new output allocated. (No ``__init__``: the
        layouts it checks are part of the plan's key.)"""
        decided, fresh, nbytes, casts = plan
        self = object.__new__(cls)
        self.__dict__.update(decided)       # one call in C for the nine attributes
        self.config, self.inputs = config, list(config.inputs)
        for k, dtype in casts:              # ``x * 2``: the 2, in x's dtype
            self.inputs[k] = _cast(self.inputs[k], dtype)
        if fresh is None:
            self.outputs = list(config.outputs)
        else:
            self.outputs = [empty_planned(self.shape, self.output_strides, fresh, self.device, nbytes)]
        self.result = self.outputs[0]
        return self

    def compute_mem_overlaps(self):
        compute_mem_overlaps(self.config)

    def compute_shape(self):
        if self.config.static_shape is not None:
            self.shape = self.config.static_shape
            return
        operands = self.inputs
        if not operands or not self.config.resize_outputs_:     # given outputs take part, first
            operands = self.config.given_outputs + operands
        # one shape for all (the usual case) is that shape; broadcast only when they differ
        shape = operands[0]._impl.sizes if operands else ()
        for t in operands:
            if t._impl.sizes != shape:      # broadcast (``x * 2``: (3,) and ()), remembered by the shapes
                key = ("broadcast", *map(_sizes, operands))
                try:
                    shape = _layouts[key]
                except (KeyError, TypeError):
                    shape = _layouts.put(key, broadcast_shapes(*key[1:]))
                break
        self.shape = shape
        if self.config.given_outputs:
            self.mark_resize_outputs()

    def mark_resize_outputs(self):
        """An ``out=`` of other sizes is resized (``will_resize``); an output that is also an
        input (in place: ``is_read_write``) must have the broadcast shape already."""
        for out in self.config.given_outputs:
            if out._impl.sizes == self.shape:
                continue
            if self.config.resize_outputs_ and not any(out._impl is i._impl for i in self.inputs):
                self.will_resize += (out,)
                continue
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(self.shape)}")

    def compute_types(self):
        """The common device and dtype, and the checks of a given output against them."""
        config, inputs = self.config, self.inputs
        given = config.given_outputs
        operands = given + inputs if given else inputs
        # The usual operands share one device object, which is then the common device; the
        # helpers run only when they differ. (Inline: this runs on every elementwise call.)
        device = operands[0]._impl.device if operands else None
        for t in operands:
            if t._impl.device is not device:
                device = common_device(*operands)
                break
        self.device = device
        uniform = None      # the inputs' one dtype, when they have one: nothing to cast
        if config.promote_inputs_to_common_dtype_:
            uniform = inputs[0]._impl.dtype
            for x in inputs:
                if x._impl.dtype is not uniform:
                    uniform = None
                    break
            common = uniform if uniform is not None else _promoted_dtype(inputs)
        else:
            common = inputs[0]._impl.dtype if inputs else given[0]._impl.dtype
        if config.promote_integer_inputs_to_float_ and common.category <= st.INTEGRAL:   # bool too
            common = st.get_default_dtype()
        self.common_dtype = common
        # what the loop computes in: ``opmath_type``, called only for the types it changes (a frame less)
        self.compute_dtype = (st.opmath_type(common) if common.is_reduced_float or common is st.complex32
                              or common.is_float8 else common)
        if given:
            self._check_given_outputs(common)
        if uniform is not common and config.promote_inputs_to_common_dtype_ and device is not None \
                and device.type == "cpu":
            # The CPU replaces such an input by ``x.to(common)``: a dense copy. The output's layout
            # is computed from the copies, and can differ from the original's: x of shape (1, 1, 2)
            # and strides (1, 1, 2) sorts its size-1 dims first, its copy is plain contiguous.
            # (CUDA casts inside the kernel instead: no copies there.)
            for k, x in enumerate(inputs):
                if x._impl.dtype is not common:
                    inputs[k] = _cast(x, common)

    def _check_given_outputs(self, common):
        """``compute_types``' checks of the given outputs' dtypes against the common one."""
        config = self.config
        if config.check_all_same_dtype_:
            for out in config.given_outputs:
                if out._impl.dtype is not common:
                    raise RuntimeError(f"Found dtype {out._impl.dtype.torch_name} but expected {common.torch_name}")
        if config.enforce_safe_casting_to_output_:
            for out, dtype in zip(self.outputs, config.output_dtypes):
                wanted = dtype or common
                if out is not None and not st.can_cast(wanted, out.dtype):
                    raise RuntimeError(f"result type {wanted.torch_name} can't be cast to the desired output "
                                       f"type {out.dtype.torch_name}")

    def fast_set_up(self):
        """Same shapes and one shared dense layout (``compute_fast_setup_type``, over the given
        outputs and the inputs): a new output takes it, and one flat loop serves them all."""
        if not self.inputs:
            return False
        shape, will_resize, given = self.shape, self.will_resize, self.config.given_outputs
        if not will_resize:
            # The usual call: every operand takes part. The answer depends on their sizes and
            # strides only (sizes unlike the broadcast shape mean no fast set-up), so the key is
            # made in C and a remembered layout needs no Python loop over the operands.
            operands = given + self.inputs if given else self.inputs
            key = ("fast", shape, *map(_sizes_and_strides, operands))
            try:
                layout = _layouts[key]
            except (KeyError, TypeError):
                layout = _layouts.put(key, self._fast_layout_of(operands))
        else:
            impls, key = [], ["fast", shape]
            for t in (given + self.inputs if given else self.inputs):
                if _is_one_of(t, will_resize):
                    continue                # its layout is the one computed here
                impl = t._impl
                if impl.sizes != shape:
                    return False
                impls.append(impl)
                key.append(impl.strides)
            # the answer depends on the shape and the strides only: remembered, as output layouts are
            try:        # a lookup in C, not ``_Memo.get``'s frame (a traced size has no hash: TypeError)
                layout = _layouts[tuple(key)]
            except (KeyError, TypeError):
                layout = _layouts.put(tuple(key), _fast_output_strides(impls, shape))
        if layout is False:
            return False
        self.output_strides = layout
        self.fast = True
        self.allocate_or_resize_outputs()
        return True

    def _fast_layout_of(self, operands):
        """``fast_set_up``'s answer for ``operands``: the output strides, or False."""
        impls = [t._impl for t in operands]
        if any(impl.sizes != self.shape for impl in impls):
            return False
        return _fast_output_strides(impls, self.shape)

    def compute_strides(self):
        """Each input's strides over the broadcast shape (0 where it is broadcast)."""
        self.operand_strides = [_operand_strides(i._impl, self.shape) for i in self.inputs]

    def reorder_dimensions(self):
        # the permutation depends on the shape and the strides only: remembered, as ``fast_set_up``'s
        key = ("reorder", self.shape, *map(tuple, self.operand_strides))
        try:
            self.perm, self.output_strides = _layouts[key]
        except (KeyError, TypeError):
            perm = _reorder(self.shape, self.operand_strides)
            self.perm, self.output_strides = _layouts.put(key, (perm, _output_strides(self.shape, perm)))

    def allocate_or_resize_outputs(self):
        for k, out in enumerate(self.outputs):
            if out is None:
                dtype = self.config.output_dtypes[k] or self.common_dtype
                self.outputs[k] = empty_strided_generic(self.shape, self.output_strides, dtype, self.device)
            elif self.will_resize and _is_one_of(out, self.will_resize):
                _resize_out(out, self.shape, self.output_strides)

    def cast_to_opmath(self):
        """The operands as the loop reads them, all in the computation dtype (see module docstring)."""
        config, compute = self.config, self.compute_dtype
        if not (compute is self.common_dtype and config.promote_inputs_to_common_dtype_
                and not config.original_scalar_inputs and self.device.type == "cpu"):
            self._cast_inputs()     # the usual case skips it: ``compute_types`` left CPU inputs in ``common``
        for k, out in enumerate(self.outputs):
            wanted = config.output_dtypes[k]
            if wanted is None:
                wanted = compute if config.cast_common_dtype_to_outputs_ else st.opmath_type(out._impl.dtype)
            if out._impl.dtype is not wanted:
                self.outputs[k] = scratch_like(out, wanted)   # the loop writes here; ``cast_outputs`` copies back

    def _cast_inputs(self):
        config, device = self.config, self.device
        common, compute = self.common_dtype, self.compute_dtype
        scalars = config.original_scalar_inputs
        for k, x in enumerate(self.inputs):
            impl = x._impl
            # Nothing to cast, nothing to move. (An original scalar too, when ``compute`` is
            # ``common``: ``compute_types`` cast it from its original dtype straight to it.)
            if impl.dtype is compute and impl.device is device and (not scalars or compute is common):
                continue
            original_scalar = k in scalars and impl.numel() == 1
            if original_scalar:
                x = config.inputs[k]
            if x.dtype is compute and x.device == device:
                self.inputs[k] = x
                continue
            if x.device != device:          # a CPU scalar joining a cuda op: ``x.to(device)``
                if impl.is_wrapped_number is st.WRAPPED_UINT64:
                    x = _cast(x, common)             # cast first: the copy would lose its unsigned mark
                x = dispatcher.call("_to_copy", x, device=device)
            if not original_scalar and x.dtype is not common and compute is not common:
                x = _cast(x, common)                 # rounded to the common dtype first, as torch's loop does
            self.inputs[k] = x if x.dtype is compute else _cast(x, compute)

    def coalesce_dimensions(self):
        """The loop's geometry: dims merged where every operand walks them as one."""
        operands = self.outputs + self.inputs
        if _meta_blocks[0] and _meta.active and not all(type(n) is int for n in self.shape):
            self.geometry = None    # a traced size has no value to merge (and no loop will run)
        elif self.fast:     # every operand walks its elements in one memory order: one flat dim
            key = (math.prod(self.shape), tuple(map(_storage_offset, operands)))
            try:            # ``flat_geometry``'s lookup, without its frame: every elementwise call comes here
                self.geometry = _geometries[key]
            except (KeyError, TypeError):
                self.geometry = flat_geometry(*key)
        elif self.config.is_reduction_:
            self.geometry = _reduction_geometry(operands[1]._impl, self.config.reduce_dims, self.config.in_memory_order)
        else:
            self.geometry = geometry([t._impl for t in operands], self.shape)

    # ------------------------------------------------------------------ running
    def buffers(self):
        """The typed flat buffers behind the operands, outputs first (bit patterns for 16-bit floats)."""
        buffers = []
        for t in self.outputs + self.inputs:
            impl = t._impl
            # the storage's view made before (a fresh output's too: ``empty_strided_generic``
            # makes it), looked up here: one call less per operand
            view = impl.storage._typed.get(impl.dtype)
            buffers.append(impl.storage.typed(impl.dtype) if view is None else view)
        return buffers

    def for_each(self, loop, limited_unsigned=False, float8=False):
        """Run ``loop(buffers, sizes, strides, offsets)`` over the whole iteration space (nothing
        for an empty one), then copy temporaries back into the outputs. Returns the result.

        A reduction's loop gets ``loop(buffers, outer_sizes, outer_strides, inner_sizes,
        inner_strides, offset)`` instead: the input's kept and reduced dims apart.
        """
        # ``is_meta_execution()``, written out: metadata only, build() already made the outputs
        if _meta_blocks[0] and _meta.active:
            return self.result
        if self.common_dtype is st.complex32 and not self.config.only_moves_:
            raise NotImplementedError("internals: this kernel is not implemented for 'ComplexHalf' (complex32 "
                                      "tensors are copied, cast, filled and viewed; torch computes with few more)")
        if self.common_dtype in st.LIMITED_UNSIGNED and not (limited_unsigned or self.config.only_moves_):
            raise NotImplementedError(f'"{running_kernel_name(self.device)}" not implemented for '
                                      f"'{self.common_dtype.torch_name}'")
        if self.common_dtype.is_float8 and not self.config.only_moves_:
            self._refuse_float8(float8)
        if 0 not in self.result._impl.sizes:      # an empty result has nothing to compute
            # ``buffers()``, written out: every elementwise call comes here
            buffers = []
            for t in self.outputs + self.inputs:
                impl = t._impl
                try:        # the view made before, found by a subscript (no method call to make)
                    buffers.append(impl.storage._typed[impl.dtype])
                except KeyError:
                    buffers.append(impl.storage.typed(impl.dtype))
            loop(buffers, *self.geometry)
            if self.outputs[0] is not self.result:
                self.cast_outputs()
        return self.result

    def _refuse_float8(self, listed):
        """The float8 types' few kernels (``listed``: True for ``==``, ``!=``, ``abs``, "tensors" for
        ``*``): any other loop is refused by the name of torch's kernel. ``*`` by a one-value operand
        (``x * 2``) takes ``mul_kernel``'s scalar road, whose dispatch (``mul_cpu_reduced_float``)
        lists no float8."""
        if listed is True or (listed == "tensors" and not self._second_input_is_scalar()):
            return
        name = "mul_cpu_reduced_float" if listed == "tensors" else running_kernel_name(self.device)
        name = _FLOAT8_KERNEL_NAMES.get(name, name)
        raise NotImplementedError(f'"{name}" not implemented for \'{self.common_dtype.torch_name}\'')

    def _second_input_is_scalar(self):
        """``iter.is_scalar(2)``: the second input reads one value everywhere (size 1 or stride 0
        in every dim), as a wrapped number does."""
        if len(self.inputs) < 2:
            return False
        impl = self.inputs[1]._impl
        return all(n == 1 or s == 0 for n, s in zip(impl.sizes, impl.strides))

    def itemsizes(self):
        """Bytes per element of each operand, outputs first: torch's strides are in bytes."""
        return [t._impl.dtype.itemsize for t in self.outputs + self.inputs]

    def can_use_32bit_indexing(self, max_value=INT32_MAX):
        """``TensorIteratorBase::can_use_32bit_indexing`` on this iterator's geometry."""
        return can_use_32bit_indexing(self.geometry, self.itemsizes(), max_value)

    def with_32bit_indexing(self, max_value=INT32_MAX):
        """``TensorIteratorBase::with_32bit_indexing``: the geometries of the pieces, in order."""
        return list(with_32bit_indexing(self.geometry, self.itemsizes(), max_value))

    def cast_outputs(self):
        """``cast_outputs``: an output computed in a temporary of another dtype gets its values."""
        _copy_kernels().same_device_copy(self.result, self.outputs[0])


# what ``build()`` decides and a plan keeps (``operand_strides`` only where it runs ``compute_strides``)
_DECIDED = ("shape", "perm", "output_strides", "operand_strides", "fast", "common_dtype", "compute_dtype",
            "device", "geometry")


def compute_mem_overlaps(config):
    """``compute_mem_overlaps``: no given output overlaps itself, or an input partially."""
    for out in config.given_outputs:
        check_no_overlap(out._impl, list(map(_impl_of, config.inputs)))


def _common_dtype(inputs):
    """``compute_common_dtype``: the promoted dtype of the inputs (inputs of one dtype, the usual
    case, promote to it whatever their dims)."""
    dtype = _uniform_dtype(inputs)
    return st.result_type(*inputs) if dtype is None else dtype


def _uniform_dtype(inputs):
    """The dtype of every input, or None if they differ."""
    dtype = inputs[0]._impl.dtype
    for i in inputs:
        if i._impl.dtype is not dtype:
            return None
    return dtype


def _promoted_dtype(inputs):
    """``st.result_type`` of the inputs (``x * 2``: float32 and a wrapped int64), remembered by what
    it reads of them -- dtypes, wrapped-number marks, sizes (dimensioned or 0-dim) -- and by the
    default dtype a wrapped float counts as."""
    key = ("result_type", st._default_dtype, *map(_promotion_facts, inputs))
    try:
        return _layouts[key]
    except (KeyError, TypeError):
        return _layouts.put(key, st.result_type(*inputs))


def scratch_like(t, dtype):
    """A kernel's scratch tensor with ``t``'s layout, allocated directly (not an operator): ``t``'s
    own strides when it is dense, else dense strides in its dims' memory order."""
    impl = t._impl
    strides = impl.strides if impl.is_non_overlapping_and_dense() else output_layout([impl], impl.sizes)
    return empty_strided_generic(impl.sizes, tuple(strides), dtype, impl.device)


def _cast(x, dtype):
    return _copy_kernels().cast_like(x, dtype)


@functools.cache
def _copy_kernels():
    """``native/copy.py``, imported on first use: copy_ is itself built on TensorIterator. (Once:
    a relative import in a function runs importlib's Python code on every call.)"""
    from .native import copy  # a real cycle: copy_ is built on TensorIterator
    return copy


def common_device(*tensors):
    """The op's device. A 0-dim CPU tensor (a wrapped Python scalar, say) may join any device."""
    found = None
    for t in tensors:
        impl = t._impl
        if impl.sizes or impl.device.type != "cpu":
            if found is None:
                found = impl.device
            elif impl.device is not found and impl.device != found:
                a, b = sorted({found, impl.device}, key=str, reverse=True)
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                   f"devices, {a} and {b}!")
    return found or tensors[0]._impl.device


def broadcast_shapes(*shapes):
    """``compute_shape``: fold the operands' shapes into one, pair by pair, with ``infer_size``."""
    result = ()
    for shape in shapes:
        result = infer_size(result, tuple(shape)) if result else tuple(shape)
    return result


def infer_size(a, b):
    """``infer_size``: align two shapes on the right; sizes must match or be 1.

    Walks from the last dim, as torch does, so a mismatch is reported at the last dim that has
    one, numbered in the result ("tensor a" is the shape so far, "tensor b" the new operand's).
    """
    # the usual case, and nothing to check; the lengths first, as a tuple compares the leading
    # sizes before its length: a traced (s77, 3) against (3,) would decide s77 == 3
    if len(a) == len(b) and a == b:
        return a
    ndim = max(len(a), len(b))
    result = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                               f"at non-singleton dimension {i}")
        result[i] = size_b if size_a == 1 else size_a
    return tuple(result)


class Geometry(tuple):
    """What a loop needs: ``shape`` (fastest first), ``strides[k, d]`` and ``offsets[k]``; a tuple
    of the three, so that ``loop(*geometry)`` unpacks it without a Python-level ``__iter__``."""
    __slots__ = ()

    def __new__(cls, shape, strides, offsets):
        if len(shape) == 0:     # a 0-dim op is a loop of one element
            shape, strides = [1], [[0] for _ in strides]
        return super().__new__(cls, (np.array(shape, dtype=np.int64),
                                     np.array(strides, dtype=np.int64).reshape(len(offsets), len(shape)),
                                     np.array(offsets, dtype=np.int64)))

    shape, strides, offsets = (property(operator.itemgetter(i)) for i in range(3))


def _operand_strides(impl, shape):
    """``compute_strides``: the operand's strides over the broadcast shape (0 where broadcast)."""
    lead = len(shape) - len(impl.sizes)
    strides = [0] * lead
    for i, (size, stride) in enumerate(zip(impl.sizes, impl.strides)):
        strides.append(0 if size == 1 and shape[lead + i] != 1 else stride)
    return strides


def _reorder(shape, strides):
    """``reorder_dimensions``: a permutation putting dims in ascending-stride order.

    ``perm[i]`` is the original dim that lands at position i (position 0 is the fastest). It
    starts as n-1, ..., 0 (row-major) and an insertion sort moves a dim only when some operand
    strictly prefers it, so broadcast (stride 0) dims and ties keep their row-major place.
    """
    def should_swap(d0, d1):
        for op_strides in strides:
            s0, s1 = op_strides[d0], op_strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:   # equal strides: the smaller size goes first
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    return perm


def _output_strides(shape, perm):
    """Contiguous strides in the permuted order (``compatible_stride`` + ``invert_perm``)."""
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)
    strides, step = [0] * len(shape), 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _fast_output_strides(impls, shape):
    """``fast_set_up``'s output strides for operands of ``shape`` (False: no fast set-up)."""
    layout = _fast_layout(impls)
    if layout is None:
        return False
    if layout == "contiguous":
        return _contiguous_strides(shape) if _hashable(shape) else contiguous_strides(shape)
    if layout == "channels_last":
        return _channels_last_strides(shape)
    return layout


def _fast_layout(impls):
    """``compute_fast_setup_type``: the strides every operand shares, if they allow one flat loop."""
    strides = impls[0].strides
    for impl in impls:
        if impl.strides != strides:
            break
    else:                       # one layout for all (the usual case): is it contiguous?
        if is_contiguous(impls[0].sizes, strides):
            return "contiguous"
    if all(is_contiguous(i.sizes, i.strides) for i in impls):
        return "contiguous"
    if all(is_channels_last(i.sizes, i.strides) for i in impls):
        return "channels_last"
    if all(is_non_overlapping_and_dense(i.sizes, i.strides) for i in impls):
        if all(i.strides == impls[-1].strides for i in impls):
            return impls[-1].strides
    return None


# The contiguous strides of a shape, remembered: the fast path asks on every call, a training
# loop with a few shapes again and again, and the loop that computes them costs more than a lookup.
@functools.lru_cache(maxsize=4096)
def _contiguous_strides(shape):
    # Through the module's name, not a copy of the function: a reader's version plugged in by
    # internals.exercises.use_mine is then the one asked (after it clears this cache).
    return contiguous_strides(shape)


def _channels_last_strides(sizes):
    n, c, h, w = sizes
    return (h * w * c, 1, w * c, c)


def coalesce(shape, strides):
    """``coalesce_dimensions``: merge dim d into the previous one where every operand allows.

    ``shape`` is fastest-first; ``strides`` a list per operand. Returns new lists.
    """
    if not shape:
        return [], [[] for _ in strides]
    shape, strides = list(shape), [list(s) for s in strides]
    prev = 0
    for d in range(1, len(shape)):
        mergeable = shape[prev] == 1 or shape[d] == 1 or all(
            shape[prev] * s[prev] == s[d] for s in strides)
        if mergeable:
            if shape[prev] == 1:
                for s in strides:
                    s[prev] = s[d]
            shape[prev] *= shape[d]
        else:
            prev += 1
            if prev != d:
                for s in strides:
                    s[prev] = s[d]
                shape[prev] = shape[d]
    return shape[:prev + 1], [s[:prev + 1] for s in strides]


def output_layout(input_impls, shape):
    """The strides torch gives a fresh output of an elementwise op over these inputs."""
    key = (tuple(shape), tuple([(i.sizes, i.strides) for i in input_impls]))
    try:
        strides = _layouts.get(key)
    except TypeError:           # a data-dependent size (a SymInt) cannot be a key: not cached
        return _output_layout(input_impls, shape)
    if strides is None:
        strides = _layouts.put(key, _output_layout(input_impls, shape))
    return strides


def _output_layout(input_impls, shape):
    # (the lengths first: a tuple compares its leading sizes before its length, which would
    # decide a traced size equal to another operand's size where the shapes only broadcast)
    same_shape = all(len(i.sizes) == len(shape) and i.sizes == shape for i in input_impls)
    if same_shape and input_impls:
        fast = _fast_layout(input_impls)
        if fast == "contiguous":
            return contiguous_strides(shape)
        if fast == "channels_last":
            return _channels_last_strides(shape)
        if fast is not None:
            return fast
    strides = [_operand_strides(i, shape) for i in input_impls]
    return _output_strides(shape, _reorder(shape, strides))


def geometry(impls, shape):
    """Loop geometry over ``impls`` (output first) sharing the broadcast ``shape``."""
    key = (tuple(shape), tuple([(i.sizes, i.strides, i.storage_offset) for i in impls]))
    g = _geometries.get(key)
    if g is None:
        g = _geometries.put(key, _geometry(impls, shape))
    return g


class _Memo(dict):
    """Layouts computed before, by operand sizes and strides: a training loop asks for the same
    few again and again, and recomputing them in Python would cost more than a small kernel.
    (Kernels only read a Geometry's arrays, so one can be shared.) Bounded: cleared when full."""

    def get(self, key, default=None):
        try:
            return super().get(key, default)
        except TypeError:       # a traced size (a SymInt) has no hash: computed afresh, not kept
            return default

    def put(self, key, value, limit=4096):
        if len(self) >= limit:
            self.clear()
        try:
            self[key] = value
        except TypeError:
            pass
        return value


_layouts, _geometries = _Memo(), _Memo()


_storage_offset = operator.attrgetter("_impl.storage_offset")    # in C: no comprehension's frame per call
_sizes = operator.attrgetter("_impl.sizes")
_impl_of = operator.attrgetter("_impl")
_promotion_facts = operator.attrgetter("_impl.dtype", "_impl.is_wrapped_number", "_impl.sizes")
_sizes_and_strides = operator.attrgetter("_impl.sizes", "_impl.strides")


def _layout_facts(t):
    """Every fact of an operand that ``build()`` reads (its storage aside): its part of a plan's
    key. (Read in Python: an ``attrgetter`` of these dotted names reads each attribute through
    the generic lookup, about twice the time of the interpreter's specialized reads.)"""
    impl = t._impl
    device = impl.device
    return (impl.sizes, impl.strides, impl.storage_offset, impl.dtype, device.type, device.index, impl.layout,
            impl.is_wrapped_number)


def _two_layout_facts(a, b):
    """``_layout_facts`` of a binary config's two inputs, written out in one frame: every
    elementwise call without ``out=`` builds its plan's key from these (two frames cost about as
    much as the lookup of the plan)."""
    a, b = a._impl, b._impl
    da, db = a.device, b.device
    return ((a.sizes, a.strides, a.storage_offset, a.dtype, da.type, da.index, a.layout, a.is_wrapped_number),
            (b.sizes, b.strides, b.storage_offset, b.dtype, db.type, db.index, b.layout, b.is_wrapped_number))


def flat_geometry(numel, offsets):
    """``fast_set_up``'s geometry: one dim of ``numel`` elements, every operand at unit stride."""
    key = (numel, tuple(offsets))
    try:        # every elementwise call of one layout comes here: a lookup in C, as in ``fast_set_up``
        return _geometries[key]
    except (KeyError, TypeError):
        return _geometries.put(key, Geometry([numel], [[1] for _ in offsets], offsets))


def _reduction_geometry(impl, dims, in_memory_order):
    """``_reduction_layout``, remembered by the input's layout and the dims (as ``geometry``)."""
    key = ("reduction", impl.sizes, impl.strides, impl.storage_offset, tuple(dims), in_memory_order)
    g = _geometries.get(key)
    if g is None:
        g = _geometries.put(key, _reduction_layout(impl, dims, in_memory_order))
    return g


def _reduction_layout(impl, dims, in_memory_order):
    """A reduction's ``(outer shape, outer strides, inner shape, inner strides, offset)``, each
    fastest-first and coalesced.

    The outer (kept) dims stay in row-major order: they index the contiguous output. The inner
    (reduced) ones may be walked ``in_memory_order`` (smallest stride fastest; broadcast dims, of
    stride 0, slowest), as ``reorder_dimensions`` sorts them: a transposed input's full sum is
    then one contiguous walk. (Not for argmax: its answer is a row-major position.)
    """
    sizes, strides = impl.sizes, impl.strides
    kept = [d for d in range(len(sizes)) if d not in dims]
    inner = sorted(dims, key=lambda d: (strides[d] == 0, strides[d])) if in_memory_order else list(reversed(dims))
    outer_shape, (outer_strides,) = coalesce([sizes[d] for d in reversed(kept)], [[strides[d] for d in reversed(kept)]])
    inner_shape, (inner_strides,) = coalesce([sizes[d] for d in inner], [[strides[d] for d in inner]])

    def as_array(v):
        return np.array(v or [1], dtype=np.int64)
    return (as_array(outer_shape), as_array(outer_strides or [0]), as_array(inner_shape),
            as_array(inner_strides or [0]), impl.storage_offset)


def _geometry(impls, shape):
    strides = [_operand_strides(i, shape) for i in impls]
    perm = _reorder(shape, strides)
    fast_shape = [shape[d] for d in perm]
    fast_strides = [[s[d] for d in perm] for s in strides]
    fast_shape, fast_strides = coalesce(fast_shape, fast_strides)
    return Geometry(fast_shape, fast_strides, [i.storage_offset for i in impls])


def _overlap(a, b):
    """``get_overlap_status``: 'full', 'partial' or None for two views."""
    if a is b:
        return "full"
    if a.storage is not b.storage or a.numel() == 0 or b.numel() == 0:     # (the cheap test first)
        return None
    if not (a.is_non_overlapping_and_dense() and b.is_non_overlapping_and_dense()):
        return None     # too hard to tell: torch lets it through too
    a0, a1 = a.storage_offset * a.dtype.itemsize, (a.storage_offset + a.numel()) * a.dtype.itemsize
    b0, b1 = b.storage_offset * b.dtype.itemsize, (b.storage_offset + b.numel()) * b.dtype.itemsize
    if (a0, a1) == (b0, b1):
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a0 < b1 and b0 < a1 else None


def has_internal_overlap(impl):
    """``has_internal_overlap``: some element reachable twice (a stride-0 dim of size > 1)."""
    if 0 not in impl.strides:       # no stride 0: never a certain overlap (torch: no, or too hard), at once
        return False
    if impl.is_non_overlapping_and_dense():
        return False
    return any(st == 0 and n > 1 for n, st in zip(impl.sizes, impl.strides))


def assert_no_internal_overlap(impl):
    """``assert_no_internal_overlap`` (``MemoryOverlap.cpp``): no write reaches an element twice."""
    if has_internal_overlap(impl):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers "
                           "to a single memory location. Please clone() the tensor before performing "
                           "the operation.")


def _is_one_of(t, tensors):
    return any(t is u for u in tensors)     # not ``in``: that compares tensors with ``==``


def _resize_out(out, shape, strides):
    """torchgen's ``resize_out`` for an ``out=`` of other sizes: ``resize_output`` (with its
    deprecation warning), then the strides this iterator computed (``as_strided_``)."""
    from .native.resize import resize_output  # a cycle: native's kernels import this module
    if resize_output(out, shape):
        out._impl.strides = tuple(strides)


def _refuse_overlap():
    raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                       "to a single memory location. Please clone() the tensor before performing the operation.")


def check_no_overlap(out, inputs):
    """TensorIterator's ``check_mem_overlap``: refuse writes that would race with themselves."""
    assert_no_internal_overlap(out)
    for i in inputs:
        # the output itself, an input of ``x.add_(y)``, overlaps fully (torch's ``is_same``): allowed
        if i is not out and _overlap(out, i) == "partial":
            _refuse_overlap()


def assert_no_overlap(a, b):
    """``assert_no_overlap`` (``MemoryOverlap.cpp``): ``a`` and ``b`` share no element, a full
    overlap refused too (``cat``, ``index_select``, ``kthvalue``)."""
    if _overlap(a, b) is not None:
        _refuse_overlap()


# ---------------------------------------------------------------------- 32-bit indexing
# A CUDA kernel indexes in int32, which is faster than int64 on a GPU. ``gpu_kernel``
# (``native/cuda/Loops.cuh``) asks ``can_use_32bit_indexing`` and otherwise runs the pieces of
# ``with_32bit_indexing``. torch's rules work on byte strides; ours keeps element strides, so
# each rule multiplies by the operands' item sizes where torch reads ``stride_bytes``.


def can_use_32bit_indexing(geometry, itemsizes, max_value=INT32_MAX):
    """``can_use_32bit_indexing`` (``TensorIterator.cpp``): the element count and every operand's
    furthest byte offset (plus one) fit in ``max_value``."""
    shape, strides = geometry.shape, geometry.strides
    if math.prod(int(n) for n in shape) > max_value:
        return False
    for k, size in enumerate(itemsizes):
        max_offset = 1 + sum((int(n) - 1) * int(s) * size for n, s in zip(shape, strides[k]))
        if max_offset > max_value:
            return False
    return True


def get_dim_to_split(geometry, itemsizes):
    """``get_dim_to_split``: the dim along which some operand spans the most bytes; the slowest
    dim wins a tie, as torch scans from the last dim down and needs a strictly larger extent."""
    best, best_dim = -1, -1
    for d in reversed(range(len(geometry.shape))):
        size = int(geometry.shape[d])
        if size == 0:
            continue
        for k, item in enumerate(itemsizes):
            extent = (size - 1) * abs(int(geometry.strides[k][d])) * item
            if extent > best:
                best, best_dim = extent, d
    return best_dim


def _narrow(geometry, dim, start, size):
    """``TensorIteratorBase::narrow``: keep ``size`` positions of ``dim`` from ``start``; every
    operand's offset moves ``start`` steps. A dim narrowed to one is coalesced away, as in torch."""
    shape = [int(n) for n in geometry.shape]
    strides = geometry.strides.tolist()
    shape[dim] = size
    offsets = [int(o) + s[dim] * start for o, s in zip(geometry.offsets, strides)]
    if size == 1:
        shape, strides = coalesce(shape, strides)
    return Geometry(shape, strides, offsets)


def split(geometry, dim):
    """``TensorIteratorBase::split``: the first ``size // 2`` positions of ``dim`` and the rest."""
    size = int(geometry.shape[dim])
    first = size // 2
    return _narrow(geometry, dim, 0, first), _narrow(geometry, dim, first, size - first)


def with_32bit_indexing(geometry, itemsizes, max_value=INT32_MAX):
    """``SplitUntil32Bit``: yield pieces that each pass ``can_use_32bit_indexing``, in torch's
    order. torch keeps a stack: it halves the top piece until it fits, yields it, pops it, and
    goes on with the second half left below; so the pieces come lowest offsets first."""
    stack = [geometry]
    while stack:
        piece = stack.pop()
        while not can_use_32bit_indexing(piece, itemsizes, max_value):
            first, rest = split(piece, get_dim_to_split(piece, itemsizes))
            stack.append(rest)
            piece = first
        yield piece


def _hashable(shape):
    """Whether a memo can keep ``shape``: a traced size (a SymInt) has no hash."""
    try:
        hash(shape)
    except TypeError:
        return False
    return True
