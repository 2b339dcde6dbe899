"""``torch.special`` (``torch/special/__init__.py``): the special functions under SciPy's names.

Each (``logit`` aside: see its docstring) is an aten operator ``special_<name>`` declared in
``native_functions.yaml`` with ``python_module: special``; torch binds them in
``torch._C._special`` and this module calls them through the dispatcher, its ``out=`` overload
when ``out`` is given. Most are torch's
CompositeImplicitAutograd renamings of operators internals already has (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``ndtr`` is made of ``erf``), so autograd records the renamed
operator's node, as in torch. Others have kernels of their own, as in torch (``i0e``, ``i1``,
``i1e``: the modified Bessel functions; ``erfcx``, ``ndtri``, ``log_ndtr``, ``xlog1py``,
``zeta``; in ``scalar_ops.py``); some of torch's (the orthogonal polynomials, the Bessel
functions of the second kind, ...) are not in internals.

>>> import internals
>>> internals.special.expit(internals.tensor([0.0]))
tensor([0.5000])
"""
import functools

from ._python_arg_parser import PythonArgParser
from ._tensor_base import TensorBase
from .aten import dispatcher

__all__ = ["digamma", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e",
           "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]     # torch's order


def _call(name, *args, out=None, overload="", out_overload="out", **kwargs):
    """``special_<name>`` (with ``overload``), or its out= form ``out_overload`` when ``out`` is given."""
    if out is None:
        return dispatcher.call(f"special_{name}{'.' + overload if overload else ''}", *args, **kwargs)
    return dispatcher.call(f"special_{name}.{out_overload}", *args, **kwargs, out=out)


def expit(input, *, out=None):
    """The logistic sigmoid, 1 / (1 + exp(-x)): ``sigmoid``."""
    return _call("expit", input, out=out)


def erf(input, *, out=None):
    return _call("erf", input, out=out)


def erfinv(input, *, out=None):
    return _call("erfinv", input, out=out)


def erfc(input, *, out=None):
    """1 - erf(x), accurate where erf(x) is close to 1: ``erfc``."""
    return _call("erfc", input, out=out)


def erfcx(input, *, out=None):
    """The scaled complement e^(x^2) erfc(x), finite where erfc underflows."""
    return _call("erfcx", input, out=out)


def ndtri(input, *, out=None):
    """The standard normal distribution's quantile function, ndtr's inverse."""
    return _call("ndtri", input, out=out)


def log_ndtr(input, *, out=None):
    """log of the standard normal CDF, accurate far into the lower tail."""
    return _call("log_ndtr", input, out=out)


def ndtr(input, *, out=None):
    """The standard normal distribution's CDF, (1 + erf(x / sqrt(2))) / 2."""
    return _call("ndtr", input, out=out)


def gammaln(input, *, out=None):
    """log |Gamma(x)|: ``lgamma``."""
    return _call("gammaln", input, out=out)


def digamma(input, *, out=None):
    return _call("digamma", input, out=out)


def psi(input, *, out=None):
    """``digamma`` under another name."""
    return _call("psi", input, out=out)


def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma: ``polygamma``."""
    return _call("polygamma", n, input, out=out)


def multigammaln(input, p, *, out=None):
    """The log of the multivariate gamma function of dimension p: ``mvlgamma``."""
    return _call("multigammaln", input, p, out=out)


def exp2(input, *, out=None):
    return _call("exp2", input, out=out)


def expm1(input, *, out=None):
    return _call("expm1", input, out=out)


def log1p(input, *, out=None):
    return _call("log1p", input, out=out)


def i0(input, *, out=None):
    """The modified Bessel function of the first kind of order 0: ``i0``."""
    return _call("i0", input, out=out)


def i0e(input, *, out=None):
    """e^-|x| I0(x), which stays finite where I0 overflows."""
    return _call("i0e", input, out=out)


def i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1."""
    return _call("i1", input, out=out)


def i1e(input, *, out=None):
    """e^-|x| I1(x)."""
    return _call("i1e", input, out=out)


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given: torch's ``special_logit``
    renames ``logit``, which this calls straight away. The ``special_logit`` operator itself is left
    out of internals: chapter 8's exercise has the reader register it from its YAML entry."""
    if out is None:
        return dispatcher.call("logit", input, eps)
    return dispatcher.call("logit.out", input, eps, out=out)


def round(input, *, decimals=0, out=None):  # noqa: A001  torch.special.round
    return _call("round", input, decimals=decimals, out=out)


def xlogy(input, other, *, out=None):
    """x * log(y), 0 where x is 0; either operand may be a number (the overload torch's parser picks)."""
    return _binary("xlogy", input, other, out)


def _binary(name, input, other, out):
    """``special_<name>`` of two operands, either of which may be a number (the overload torch's
    parser picks: ``self_scalar``, ``other_scalar``); two numbers match none of them."""
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        _binary_parser(name).parse((input, other), {} if out is None else {"out": out})   # torch's TypeError
    if not isinstance(input, TensorBase):
        return _call(name, input, other, overload="self_scalar", out_overload="self_scalar_out", out=out)
    if not isinstance(other, TensorBase):
        return _call(name, input, other, overload="other_scalar", out_overload="other_scalar_out", out=out)
    return _call(name, input, other, out=out)


@functools.cache
def _binary_parser(name):
    """The three signatures torch's parser lists for ``special_<name>``, for its error message."""
    return PythonArgParser([f"special_{name}(Tensor input, Tensor other, *, Tensor out=None)",
                            f"special_{name}(Scalar self, Tensor other, *, Tensor out=None)",
                            f"special_{name}(Tensor input, Scalar other, *, Tensor out=None)"])


def xlog1py(input, other, *, out=None):
    """x * log1p(y), 0 where x is 0 (even where log1p(y) is not finite), NaN where y is NaN."""
    return _binary("xlog1py", input, other, out)


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function of x = ``input`` and q = ``other``: the sum over k >= 0 of (k + q)^-x."""
    return _binary("zeta", input, other, out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _call("logsumexp", input, [dim] if isinstance(dim, int) else list(dim), keepdim, out=out)


def sinc(input, *, out=None):
    """The normalised sinc, sin(pi x) / (pi x), 1 at 0: ``sinc``."""
    return _call("sinc", input, out=out)


def softmax(input, dim, *, dtype=None):
    return _call("softmax", input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _call("log_softmax", input, dim, dtype=dtype)
