"""The float8 types against torch: float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz
and float8_e8m0fnu, as torch has them on the CPU.

Conversions are compared bit for bit (``view(uint8)`` of the results, and the float32/float64
bits of every one of the 256 patterns, NaN payloads included): c10 rounds to nearest even into
them, e4m3fn saturates past 448, e5m2 overflows to inf, the fnuz types have one NaN (0x80) and
no -0, e8m0fnu keeps an exponent only. torch makes, casts, copies, fills, views, indexes, prints
and saves such tensors, and computes only ==, !=, abs and a product of two tensors in them; they
promote with nothing. Every other kernel raises NotImplementedError, and internals refuses the
same ones with torch's message, which names torch's kernel.
"""
import io
import pickle

import numpy as np
import pytest
import torch
from helpers import outcome

import internals

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


def _pair(name):
    return getattr(internals, name), getattr(torch, name)


@pytest.mark.parametrize("name", NAMES)
def test_the_dtype_objects(name):
    ours, theirs = _pair(name)
    assert (ours.itemsize, ours.is_signed, ours.is_floating_point, ours.is_complex) == (
        theirs.itemsize, theirs.is_signed, theirs.is_floating_point, theirs.is_complex)
    assert repr(ours).replace("internals.", "torch.") == repr(theirs)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert internals.zeros(3, dtype=ours).element_size() == torch.zeros(3, dtype=theirs).element_size()


@pytest.mark.parametrize("name", NAMES)
def test_finfo_matches_torchs_in_every_field(name):
    ours, theirs = internals.finfo(_pair(name)[0]), torch.finfo(_pair(name)[1])
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def _all_patterns(lib, name):
    return lib.tensor(list(range(256)), dtype=lib.int64).to(lib.uint8).view(getattr(lib, name))


@pytest.mark.parametrize("name", NAMES)
def test_every_bit_pattern_converts_to_float32_and_float64_bit_for_bit(name):
    ours, theirs = _all_patterns(internals, name), _all_patterns(torch, name)
    assert ours.float().view(internals.int32).tolist() == theirs.float().view(torch.int32).tolist()
    assert ours.double().view(internals.int64).tolist() == theirs.double().view(torch.int64).tolist()
    # float16: the values (torch's vectorised float -> half cast keeps a NaN's payload bits)
    assert str(ours.half().tolist()) == str(theirs.half().tolist())


def _float32_bits():
    """Random float32 bit patterns, with each format's edges: every value of one float8 type is
    a boundary or a neighbour of one (the halfway points between float8 neighbours, one ulp
    either side of them), subnormals of both, ±0, ±inf, NaNs with either sign."""
    rng = np.random.default_rng(8)
    random = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    hi = np.arange(2**12, dtype=np.uint32) << 20          # sign, exponent and 3 mantissa bits
    rounding = np.array([0, 1, 0x7FFFF, 0x80000, 0x80001, 0xFFFFF], np.uint32)   # below, at, past halfway
    grid = (hi[:, None] | rounding[None, :]).reshape(-1)
    halfway2 = ((np.arange(2**11, dtype=np.uint32) << 21)[:, None]
                | np.array([0xFFFFF, 0x100000, 0x100001], np.uint32)[None, :]).reshape(-1)
    specials = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 1,
                         0x80000001, 0x007FFFFF], np.uint32)
    return np.concatenate([random, grid, halfway2, specials])


@pytest.mark.parametrize("name", NAMES)
def test_float32_values_convert_bit_for_bit(name):
    bits = _float32_bits().view(np.int32)
    ours = internals.tensor(bits.tolist(), dtype=internals.int32).view(internals.float32)
    theirs = torch.tensor(bits.tolist(), dtype=torch.int32).view(torch.float32)
    ours_dtype, theirs_dtype = _pair(name)
    assert ours.to(ours_dtype).view(internals.uint8).tolist() == theirs.to(theirs_dtype).view(torch.uint8).tolist()


def _doubles():
    """float64 values that round twice (through float32, as c10's constructors take a float):
    a float8 halfway point nudged by less than a float32 ulp, and the usual edges."""
    halfway = [1.0625, 1.125 + 0.0625, 3.0 * 2.0**-10, 0.5 + 2**-5, 1.25, 1.5 * 2.0**-7, 2.0**-9 * 1.5, 1.5]
    nudged = [h * (1 + s * 2.0**-40) for h in halfway for s in (-1, 1)]
    edges = [0.0, -0.0, 448.0, 464.0, 480.0, 57344.0, 61440.0, 240.0, 248.0, 1e300, -1e300, 1e-300,
             float("inf"), float("-inf"), float("nan"), 2.0**-127, 2.0**127, 3.0 * 2.0**126]
    return nudged + [-v for v in nudged] + edges


@pytest.mark.parametrize("name", NAMES)
def test_float64_and_integer_values_convert_as_c10_converts_them(name):
    ours_dtype, theirs_dtype = _pair(name)
    doubles = _doubles()
    assert (internals.tensor(doubles, dtype=internals.float64).to(ours_dtype).view(internals.uint8).tolist()
            == torch.tensor(doubles, dtype=torch.float64).to(theirs_dtype).view(torch.uint8).tolist())
    assert (internals.tensor(doubles, dtype=ours_dtype).view(internals.uint8).tolist()
            == torch.tensor(doubles, dtype=theirs_dtype).view(torch.uint8).tolist())
    ints = [0, 1, -1, 7, 17, 300, -300, 100000, 2**40, -(2**62)]
    for ours_src, theirs_src in ((internals.int64, torch.int64), (internals.int32, torch.int32)):
        ints_in = [v for v in ints if abs(v) < 2**31] if ours_src is internals.int32 else ints
        assert (internals.tensor(ints_in, dtype=ours_src).to(ours_dtype).view(internals.uint8).tolist()
                == torch.tensor(ints_in, dtype=theirs_src).to(theirs_dtype).view(torch.uint8).tolist())
    assert (internals.tensor([True, False]).to(ours_dtype).view(internals.uint8).tolist()
            == torch.tensor([True, False]).to(theirs_dtype).view(torch.uint8).tolist())


@pytest.mark.parametrize("name", NAMES)
def test_every_bit_pattern_casts_to_every_other_dtype_as_torchs(name):
    ours, theirs = _all_patterns(internals, name), _all_patterns(torch, name)
    targets = ["bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", *NAMES]
    for target in targets:
        def program(lib, target=target):
            return _bits(_all_patterns(lib, name).to(getattr(lib, target)))
        assert outcome(program, internals) == outcome(program, torch), target
    # complex: the real part the float value, the imaginary part 0 (floats compared as bits)
    assert (ours.to(internals.complex64).real.view(internals.int32).tolist()
            == theirs.to(torch.complex64).real.view(torch.int32).tolist())


def _bits(t):
    """A tensor's stored bytes, as ints: NaNs compared by their bits."""
    return t.view(_lib_of(t).uint8).tolist() if t.dtype.itemsize == 1 and t.dtype.is_floating_point else (
        t.view(_lib_of(t).int16).tolist() if t.dtype.itemsize == 2 and t.dtype.is_floating_point else t.tolist())


def _lib_of(t):
    return internals if isinstance(t, internals.Tensor) else torch


def test_a_complex_value_becomes_its_real_part():
    values = [1 + 2j, -3.5 - 1j, 500 + 0j]
    for name in NAMES:
        def program(lib, name=name):
            return lib.tensor(values).to(getattr(lib, name)).view(lib.uint8).tolist()
        assert outcome(program, internals) == outcome(program, torch), name


@pytest.mark.parametrize("name", NAMES)
def test_printing_matches_torchs(name):
    for program in (lambda lib: _all_patterns(lib, name)[::7],
                    lambda lib: _all_patterns(lib, name)[40:44].reshape(2, 2),
                    lambda lib: lib.tensor([1.0, 2.5, -3.0]).to(getattr(lib, name)),
                    lambda lib: lib.tensor(3.0, dtype=getattr(lib, name)),
                    lambda lib: lib.tensor([], dtype=getattr(lib, name))):
        assert repr(program(internals)).replace("internals.", "torch.") == repr(program(torch))
        assert str(program(internals)).replace("internals.", "torch.") == str(program(torch))


@pytest.mark.parametrize("name", NAMES)
def test_item_and_tolist_give_the_float_values(name):
    ours, theirs = _all_patterns(internals, name), _all_patterns(torch, name)
    assert str(ours.tolist()) == str(theirs.tolist())      # NaN compared by its printed text
    assert str([ours[k].item() for k in range(0, 256, 5)]) == str([theirs[k].item() for k in range(0, 256, 5)])


def _same(program, name):
    """``program(lib, dtype)`` gives torch's result (compared as printed, and as the stored bits
    of a float8 tensor), or raises torch's exception class with torch's message."""
    ours, theirs = (outcome(lambda lib: _shown(program(lib, getattr(lib, name))), lib) for lib in (internals, torch))
    assert ours == theirs


def _shown(value):
    if isinstance(value, tuple):
        return tuple(_shown(v) for v in value)
    if isinstance(value, (internals.Tensor, torch.Tensor)) and value.dtype.itemsize == 1 \
            and value.dtype.is_floating_point:
        return " ".join(repr(value).replace("internals", "torch").split()), _bits(value)
    return " ".join(repr(value).replace("internals", "torch").split())


def _x(lib, f):
    return lib.tensor([1.0, 2.5, -3.0, 0.5]).to(f)


def _y(lib, f):
    return lib.tensor([2.0, 2.5, 0.25, -1.0]).to(f)


def _set(t):
    t[0] = 9.0
    return t


SUPPORTED = {
    "factories": lambda lib, f: (lib.zeros(2, dtype=f), lib.ones(2, dtype=f), lib.full((2,), 3.0, dtype=f),
                                 lib.zeros_like(_x(lib, f)), lib.ones_like(_x(lib, f)), lib.empty(2, dtype=f).shape,
                                 lib.eye(2, dtype=f), _x(lib, f).new_zeros(2), _x(lib, f).new_full((2,), 2.0)),
    "construction": lambda lib, f: (lib.tensor([[1, 2], [3, 4]], dtype=f), lib.tensor([300.0, 1e-3], dtype=f),
                                    lib.tensor([True, False], dtype=f), lib.tensor(0.1, dtype=f)),
    "casts": lambda lib, f: (_x(lib, f).to(lib.float32), _x(lib, f).double(), _x(lib, f).long(),
                             _x(lib, f).to(lib.uint8), _x(lib, f).half(), _x(lib, f).bool(),
                             _x(lib, f).type(lib.float8_e5m2), lib.tensor([1.3, -70.0]).to(f)),
    "views": lambda lib, f: (_x(lib, f).view(lib.uint8), _x(lib, f).view(lib.int8),
                             _x(lib, f).view(lib.uint8).view(f), lib.tensor([1, 2], dtype=lib.int16).view(f),
                             _x(lib, f).reshape(2, 2).t(), _x(lib, f).unsqueeze(0).expand(2, 4),
                             _x(lib, f)[1:3], _x(lib, f).narrow(0, 1, 2), _x(lib, f).unfold(0, 2, 1)),
    "copies": lambda lib, f: (_x(lib, f).clone(), _x(lib, f).reshape(2, 2).t().contiguous(),
                              lib.cat([_x(lib, f), _y(lib, f)]), lib.stack([_x(lib, f), _y(lib, f)], 1),
                              _x(lib, f).clone().copy_(lib.tensor([1.0, 1e3, -0.0, 5e-3])),
                              _x(lib, f).clone().copy_(_y(lib, f)), _x(lib, f).roll(1),
                              _x(lib, f).repeat_interleave(2), _x(lib, f).unsqueeze(1).repeat(1, 2),
                              _x(lib, f).diag()),
    "indexing": lambda lib, f: (_x(lib, f)[1], _x(lib, f)[lib.tensor([0, 2])],
                                _x(lib, f)[lib.tensor([True, False, True, False])],
                                _x(lib, f).index_select(0, lib.tensor([3, 0])),
                                _x(lib, f).clone().index_put_((lib.tensor([0]),), _y(lib, f)[:1]),
                                lib.where(lib.tensor([True, False, True, False]), _x(lib, f), _y(lib, f))),
    "setitem_and_fill": lambda lib, f: (_set(_x(lib, f).clone()), _x(lib, f).clone().fill_(2),
                                        _x(lib, f).clone().zero_(), lib.zeros(1, dtype=f).fill_(1000)),
    "equality": lambda lib, f: (_x(lib, f) == _y(lib, f), _x(lib, f) != _y(lib, f), _x(lib, f) == 2.5,
                                _x(lib, f).ne(1), _x(lib, f).isnan(), _x(lib, f).any(), _x(lib, f).all()),
    "abs_and_product": lambda lib, f: (_x(lib, f).abs(), _x(lib, f).clone().abs_(), _x(lib, f) * _y(lib, f),
                                       _x(lib, f).clone().mul_(_y(lib, f)),
                                       _x(lib, f).mul(_y(lib, f).expand(2, 4))),
    "equal": lambda lib, f: (lib.equal(_x(lib, f), _x(lib, f)), lib.equal(_x(lib, f), _y(lib, f)),
                             lib.equal(lib.tensor([0.0]).to(f), lib.tensor([-0.0]).to(f))),
    "reductions_into_float32": lambda lib, f: (_x(lib, f).sum(dtype=lib.float32),
                                               _x(lib, f).reshape(2, 2).sum(0, dtype=lib.float32),
                                               _x(lib, f).mean(dtype=lib.float32), _x(lib, f).prod(dtype=lib.float32)),
    "matrix_product": lambda lib, f: (_x(lib, f).reshape(2, 2).mm(_y(lib, f).reshape(2, 2)),
                                      _x(lib, f).reshape(2, 2) @ _y(lib, f).reshape(2, 2)),
    "result_type_with_numbers": lambda lib, f: (lib.result_type(_x(lib, f), 2), lib.result_type(_x(lib, f), 2.5),
                                                lib.result_type(_x(lib, f), lib.tensor(2.5)),
                                                lib.promote_types(f, f)),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", SUPPORTED)
def test_what_torch_supports_works_as_torchs(case, name):
    _same(SUPPORTED[case], name)


@pytest.mark.parametrize("name", NAMES)
def test_every_bit_pattern_through_abs_and_equality(name):
    def program(lib, f):
        x = _all_patterns(lib, name)
        return x.abs(), x == x, x != x, x == x.roll(1), x != x.roll(3), x.isnan()
    _same(program, name)


@pytest.mark.parametrize("name", NAMES)
def test_out_of_range_fills_are_refused_and_nan_and_inf_kept_where_the_type_has_them(name):
    for value in (1000.0, 1e6, float("inf"), float("-inf"), float("nan"), -1.0, 1e-30):
        _same(lambda lib, f, value=value: lib.zeros(3, dtype=f).fill_(value), name)
        _same(lambda lib, f, value=value: lib.full((2,), value, dtype=f), name)
        _same(lambda lib, f, value=value: lib.zeros(1, dtype=f).fill_(value), name)


REFUSED = {
    "add": lambda lib, f: _x(lib, f) + _y(lib, f),
    "sub": lambda lib, f: _x(lib, f) - _y(lib, f),
    "div": lambda lib, f: _x(lib, f) / _y(lib, f),
    "mul_scalar": lambda lib, f: _x(lib, f) * 2,
    "mul_float_scalar": lambda lib, f: _x(lib, f) * 2.0,
    "mul_zero_dim": lambda lib, f: _x(lib, f) * lib.tensor(2.0),
    "mul_one_element": lambda lib, f: _x(lib, f) * lib.ones(1, dtype=f),
    "neg": lambda lib, f: -_x(lib, f),
    "exp": lambda lib, f: lib.exp(_x(lib, f)),
    "exp_": lambda lib, f: _x(lib, f).exp_(),
    "ceil": lambda lib, f: _x(lib, f).ceil(),
    "floor": lambda lib, f: _x(lib, f).floor(),
    "round": lambda lib, f: _x(lib, f).round(),
    "trunc": lambda lib, f: _x(lib, f).trunc(),
    "sign": lambda lib, f: _x(lib, f).sign(),
    "lt": lambda lib, f: _x(lib, f) < _y(lib, f),
    "clamp": lambda lib, f: _x(lib, f).clamp(0, 1),
    "sum": lambda lib, f: _x(lib, f).sum(),
    "mean": lambda lib, f: _x(lib, f).mean(),
    "prod": lambda lib, f: _x(lib, f).prod(),
    "max": lambda lib, f: _x(lib, f).max(),
    "max_dim": lambda lib, f: _x(lib, f).max(0),
    "amax": lambda lib, f: _x(lib, f).amax(),
    "argmax": lambda lib, f: _x(lib, f).argmax(),
    "aminmax": lambda lib, f: _x(lib, f).aminmax(),
    "cumsum": lambda lib, f: _x(lib, f).cumsum(0),
    "sort": lambda lib, f: _x(lib, f).sort(),
    "unique": lambda lib, f: _x(lib, f).unique(),
    "topk": lambda lib, f: _x(lib, f).topk(1),
    "flip": lambda lib, f: _x(lib, f).flip(0),
    "take": lambda lib, f: _x(lib, f).take(lib.tensor([0])),
    "masked_fill": lambda lib, f: _x(lib, f).masked_fill(lib.tensor([True, False, True, False]), 1.0),
    "index_fill": lambda lib, f: _x(lib, f).index_fill(0, lib.tensor([0]), 1.0),
    "index_copy": lambda lib, f: _x(lib, f).index_copy(0, lib.tensor([0]), _y(lib, f)[:1]),
    "index_add": lambda lib, f: _x(lib, f).index_add(0, lib.tensor([0]), _y(lib, f)[:1]),
    "nonzero": lambda lib, f: _x(lib, f).nonzero(),
    "equal_one_tensor_twice": lambda lib, f: (lambda x: lib.equal(x, x))(_x(lib, f)),
    "trace": lambda lib, f: _x(lib, f).trace(),
    "arange": lambda lib, f: lib.arange(3, dtype=f),
    "linspace": lambda lib, f: lib.linspace(0, 1, 3, dtype=f),
    "rand": lambda lib, f: lib.rand(3, dtype=f),
    "randn": lambda lib, f: lib.randn(3, dtype=f),
    "random_": lambda lib, f: lib.zeros(3, dtype=f).random_(),
    "std": lambda lib, f: _x(lib, f).std(),
    "var_over_a_dim": lambda lib, f: _x(lib, f).reshape(2, 2).var(1),
    "std_mean": lambda lib, f: lib.std_mean(_x(lib, f)),
    "var_mean_over_a_dim": lambda lib, f: lib.var_mean(_x(lib, f).reshape(2, 2), 0),
    "norm": lambda lib, f: _x(lib, f).norm(p=1),
    "vector_norm": lambda lib, f: lib.linalg.vector_norm(_x(lib, f).reshape(2, 2), dim=0),
    "softmax_last_dim": lambda lib, f: _x(lib, f).reshape(2, 2).softmax(1),
    "softmax_first_dim": lambda lib, f: _x(lib, f).reshape(2, 2).softmax(0),
    "log_softmax": lambda lib, f: _x(lib, f).log_softmax(0),
    "bmm": lambda lib, f: lib.bmm(_x(lib, f).reshape(1, 2, 2), _y(lib, f).reshape(1, 2, 2)),
    "dot": lambda lib, f: lib.dot(_x(lib, f), _y(lib, f)),
    "argmax_dim": lambda lib, f: _x(lib, f).reshape(2, 2).argmax(0),
    "promote_with_float32": lambda lib, f: _x(lib, f) + lib.ones(4),
    "equality_with_float32": lambda lib, f: _x(lib, f) == lib.ones(4),
    "result_type": lambda lib, f: lib.result_type(_x(lib, f), lib.ones(1)),
    "promote_with_bool": lambda lib, f: lib.promote_types(lib.bool, f),
    "promote_with_uint16": lambda lib, f: lib.promote_types(f, lib.uint16),
    "promote_float8s": lambda lib, f: lib.promote_types(f, lib.float8_e5m2 if f is not lib.float8_e5m2
                                                        else lib.float8_e4m3fn),
    "with_a_complex_number": lambda lib, f: lib.result_type(_x(lib, f), 1j),
    "numpy": lambda lib, f: _x(lib, f).numpy(),
}


@pytest.mark.parametrize("case", REFUSED)
def test_what_torch_refuses_raises_torchs_class_and_message(case):
    for name in NAMES:
        def program(lib, name=name):
            return REFUSED[case](lib, getattr(lib, name))
        ours, theirs = outcome(program, internals), outcome(program, torch)
        assert ours[0] == "error" and ours == theirs, name


@pytest.mark.parametrize("name", NAMES)
def test_save_and_load_either_way(name):
    ours_dtype, theirs_dtype = _pair(name)
    ours = _all_patterns(internals, name)[3:]
    buffer = io.BytesIO()
    internals.save(ours, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded.dtype is theirs_dtype and loaded.storage_offset() == 3
    assert loaded.view(torch.uint8).tolist() == ours.view(internals.uint8).tolist()
    buffer = io.BytesIO()
    torch.save(loaded, buffer)
    buffer.seek(0)
    back = internals.load(buffer)
    assert back.dtype is ours_dtype and back.view(internals.uint8).tolist() == list(range(3, 256))


@pytest.mark.parametrize("name", NAMES)
def test_casts_on_the_cuda_device_give_the_cpus_bits(name):
    """The CUDA loops run the same bit conversions (on the simulator where no GPU is found)."""
    dtype = getattr(internals, name)
    x = internals.tensor([1.0, 2.5, -3.0, 1000.0, float("nan"), -0.0, 1e-3, float("inf")])
    on_cpu = x.to(dtype)
    assert x.to("cuda").to(dtype).cpu().view(internals.uint8).tolist() == on_cpu.view(internals.uint8).tolist()
    assert (on_cpu.to("cuda").float().cpu().view(internals.int32).tolist()
            == on_cpu.float().view(internals.int32).tolist())


@pytest.mark.parametrize("name", NAMES)
def test_isinf_and_isfinite_where_torch_has_them(name):
    """e5m2 (the one with an infinity) has both, e8m0fnu isfinite alone (every value, NaN too);
    the others refuse both."""
    _same(lambda lib, f: _all_patterns(lib, name).isinf(), name)
    _same(lambda lib, f: _all_patterns(lib, name).isfinite(), name)
