"""Ready-made parametrizations (``torch/nn/utils/parametrizations.py``) on top of
``nn.utils.parametrize``: ``orthogonal`` (a matrix kept orthogonal through the matrix
exponential, the Cayley map or a product of Householder reflectors), ``weight_norm`` (a
direction and a magnitude learned apart) and ``spectral_norm`` (a weight divided by its largest
singular value, estimated by power iteration).
"""
import enum

from ... import _functional as _F
from ... import linalg
from ..._tensor import Tensor
from ..._tensor_base import torch_size_text
from ..._type_info import finfo
from ...autograd.grad_mode import no_grad
from ...c10.memory_format import contiguous_format
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    """Q^H Q is the identity within 10 n epsilons (absolute), as torch's test reads it."""
    n, k = Q.size(-2), Q.size(-1)
    eye = _F.eye(k, dtype=Q.dtype, device=Q.device)
    return _F.allclose(Q.mH @ Q, eye, atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of a tall A = QR whose R has a real, non-negative diagonal: geqrf's reflectors
    multiplied out, each column turned by the phase of R's diagonal entry."""
    X, tau = _F.geqrf(A)
    Q = linalg.householder_product(X, tau)
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix made from an unconstrained one of the same shape. The
    exponential and Cayley maps read X's lower triangle as a skew-Hermitian A = L - L^H (a tall
    X padded with zero columns to a square), the Householder map reads X's columns below the
    diagonal as reflectors with tau = 2 / (1 + |v|^2), X's diagonal signs flipping columns. A wide
    X is handled through its transpose. With ``use_trivialization`` the result is multiplied by
    ``base``, an orthogonal matrix that assignments (``right_inverse``) set."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = _F.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _F.matrix_exp(A)
            else:       # (I - A/2)^-1 (I + A/2)
                eye = _F.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(_F.add(eye, A, alpha=-0.5), _F.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # the diagonal's signs flip columns; cast to int so that no gradient reaches it
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {torch_size_text(self.shape)}. "
                             f"Got a tensor of shape {torch_size_text(Q.shape)}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n
        if not hasattr(self, "base"):
            # Without a base, only the Householder map can be inverted: its reflectors are
            # geqrf's, R's diagonal signs kept on the diagonal (flipped where tau is 0, where
            # LAPACK reflected nothing).
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = _F.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:       # completed to a square with random columns, then orthogonalized
            N = _F.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(_F.cat([Q, N], dim=-1))
        self.base = Q
        # the stored tensor is -I: the Householder map of -I is I, so the weight is the base
        neg_eye = _F.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep ``module.<name>`` (a matrix or a batch of them) orthogonal, or unitary: orthonormal
    columns when it is tall, rows when it is wide. ``orthogonal_map`` is "matrix_exp", "cayley"
    or "householder"; by default the exponential for a square or complex matrix, Householder
    otherwise. The current value is kept (made orthogonal by a QR first if it is not)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square_or_complex = weight.size(-2) == weight.size(-1) or weight.is_complex()
        orthogonal_map = "matrix_exp" if square_or_complex else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``weight = g * v / ||v||``, the norm taken over every dimension but ``dim``
    (over all of them when ``dim`` is None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _F._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        # Two tensors, so they are stored as original0 (g) and original1 (v).
        return _F.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``original0`` and a direction ``original1``
    (Salimans and Kingma, 2016), each trained on its own."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        # A checkpoint of the older hook-based weight_norm names the tensors name_g and name_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, with ``sigma`` the largest singular value of the weight seen as a
    matrix (``dim`` first, the rest flattened), estimated from the vectors ``_u`` and ``_v``
    that each training-mode forward refines by ``n_power_iterations`` steps."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A vector needs no estimate: its only singular value is its norm.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # Drawn in torch's order (u, then v) so the same seed gives the same start.
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # A random start is far from the top singular vectors; fifteen steps bring it close.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        # out= writes into the buffers themselves: the vectors persist from step to step, and
        # a DataParallel replica's updates would reach the same storage.
        for _ in range(n_power_iterations):
            self._u = F.normalize(_F.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
            self._v = F.normalize(_F.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones: the power method overwrites the buffers in place, and autograd saved them.
        u = self._u.clone(memory_format=contiguous_format)
        v = self._v.clone(memory_format=contiguous_format)
        sigma = _F.vdot(u, _F.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # Assigning a weight stores it as given: the next forward divides it by its sigma.
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Constrain ``module.<name>`` to spectral norm one (Miyato et al., 2018). ``dim`` defaults to
    the output-channel dimension: 1 for the transposed convolutions, 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        # Torch also names ConvTranspose3d, which the package does not have.
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
