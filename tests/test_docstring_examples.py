"""torch's own docstring examples, run on torch and on internals: each API's ``>>>`` examples are
read from the installed torch's docstring, run one statement at a time as doctest runs them (an
expression statement prints its repr), from ``manual_seed(0)``, with every ``torch`` in the text
read as ``internals`` for the second run; the two transcripts (and the tensors each run leaves
in its variables) must be equal, errors included, each printed float within one unit of its last
printed digit.

The examples are torch's, not copies: a newer torch with other examples is tested as it is.
Listed are the APIs whose examples run without files, networks or devices; the ones marked
``KNOWN`` print something internals cannot (yet) print, each a strict xfail so that a fix is
noticed.
"""
import contextlib
import doctest
import io
import re
import warnings
from decimal import Decimal

import numpy
import pytest
import torch
from helpers import ADDRESS, NUMBER, last_digit

import internals

APIS = [
    "torch.special.expit", "torch.special.erf", "torch.special.erfinv", "torch.special.ndtr", "torch.special.gammaln",
    "torch.special.digamma", "torch.special.logit", "torch.special.xlogy", "torch.special.softmax",
    "torch.special.log_softmax", "torch.linalg.matrix_norm", "torch.linalg.multi_dot", "torch.linalg.tensorinv",
    "torch.linalg.tensorsolve", "torch.linalg.cond", "torch.linalg.matrix_rank",
    "torch.aminmax", "torch.as_tensor", "torch.conj", "torch.resolve_conj", "torch.conj_physical", "torch.resolve_neg",
    "torch.imag", "torch.real",
    "torch.sgn", "torch.equal",
    "torch.logical_and", "torch.logical_or", "torch.logical_xor", "torch.logical_not", "torch.nanmean",
    "torch.set_default_dtype", "torch.Tensor.register_post_accumulate_grad_hook", "torch.Tensor.to_sparse",
    "torch.nn.NLLLoss", "torch.nn.EmbeddingBag", "torch.nn.functional.embedding_bag", "torch.nn.Upsample",
    "torch.nn.UpsamplingNearest2d", "torch.nn.UpsamplingBilinear2d", "torch.nn.utils.rnn.pad_sequence",
    "torch.nn.utils.rnn.pack_sequence", "torch.nn.utils.rnn.pad_packed_sequence",
    "torch.nn.utils.rnn.unpad_sequence", "torch.nn.utils.rnn.unpack_sequence", "torch.nn.init.orthogonal_",
    "torch.cholesky", "torch.linalg.det", "torch.linalg.slogdet", "torch.linalg.solve",
    "torch.nn.functional.conv_transpose1d", "torch.nn.functional.conv_transpose2d", "torch.nn.ConvTranspose1d",
    "torch.nn.init.trunc_normal_", "torch.nn.ELU", "torch.nn.Hardtanh", "torch.nn.ReLU6", "torch.nn.Softplus",
    "torch.nn.Mish", "torch.nn.functional.cosine_similarity", "torch.nanmedian", "torch.quantile",
    "torch.unique_consecutive", "torch.vdot", "torch.nn.RNN", "torch.nn.GRU",
    "torch.nn.functional.scaled_dot_product_attention", "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerEncoder", "torch.nn.CosineSimilarity", "torch.linalg.eigvalsh", "torch.linalg.eigh",
    "torch.linalg.eig", "torch.linalg.eigvals", "torch.linalg.pinv", "torch.linalg.svd", "torch.linalg.svdvals",
    "torch.linalg.qr", "torch.linalg.inv", "torch.svd",
    # the APIs of the intermediate tutorials' programs
    "torch.nn.TransformerDecoder", "torch.Tensor.register_hook", "torch.no_grad", "torch.enable_grad",
    "torch.set_grad_enabled", "torch.nn.Embedding", "torch.nn.LeakyReLU", "torch.nn.Tanh", "torch.nn.BCELoss",
    "torch.nn.BatchNorm2d", "torch.nn.LogSoftmax", "torch.nn.Dropout", "torch.nn.CrossEntropyLoss",
    "torch.nn.GRUCell", "torch.nn.RNNCell", "torch.bmm", "torch.nn.Softmax", "torch.nn.MaxPool2d", "torch.nn.Flatten",
    "torch.nn.functional.one_hot", "torch.nn.Embedding.from_pretrained", "torch.nn.functional.embedding",
    "torch.nn.BCEWithLogitsLoss", "torch.nn.Dropout2d", "torch.nn.AdaptiveAvgPool2d",
    "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss", "torch.nn.functional.gumbel_softmax",
]
CHECKS_WITH_DIST = ("its example checks itself with torch.dist, which the package leaves for chapter 8's exercise "
                    "(the reader registers it)")
KNOWN = {
    **dict.fromkeys(("torch.cholesky", "torch.linalg.eigh", "torch.linalg.eig", "torch.linalg.eigvals",
                     "torch.linalg.pinv", "torch.linalg.svd", "torch.linalg.svdvals", "torch.linalg.inv", "torch.svd"),
                    CHECKS_WITH_DIST),
    "torch.linalg.qr": CHECKS_WITH_DIST + "; and MKL's R of its integer example is not integral in the last bits, "
                       "which prints -14.0000 where OpenBLAS's prints -14.",
}


def _resolve(name):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def examples(name):
    """The ``>>>`` statements of the API's docstring, in order; without a CUDA build of torch,
    not those that put a tensor on a GPU (internals, with its simulator, would run them)."""
    statements = [e.source for e in doctest.DocTestParser().get_examples(_resolve(name).__doc__ or "")]
    if not torch.cuda.is_available():
        statements = [s for s in statements if "cuda" not in s]
    return statements


def transcript(lib, statements):
    """What the statements print under ``lib``, as doctest would see it (addresses masked, the
    library's name written as torch's); the settings an example may change are put back."""
    lib.manual_seed(0)
    # the names torch's doctest run provides (some examples use numpy without importing it)
    buffer = io.StringIO()
    namespace = {"__name__": "__main__", "torch": torch, "internals": internals, "numpy": numpy, "np": numpy,
                 "nn": lib.nn, "F": lib.nn.functional}
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for source in statements:
                if lib is internals:
                    source = re.sub(r"\btorch\b", "internals", source)
                try:
                    exec(compile(source, "<docstring>", "single"), namespace)
                except Exception as exc:     # noqa: BLE001 -- what it raises is part of what it shows
                    print(f"!! {type(exc).__name__}: {exc}")
            # and the tensors the example leaves behind (some examples print nothing)
            for key in sorted(namespace):
                if isinstance(namespace[key], (torch.Tensor, internals.Tensor)):
                    print(f"{key} = {namespace[key]!r}")
    finally:
        lib.set_default_dtype(lib.float32)
        lib.set_grad_enabled(True)
        lib.set_printoptions(profile="default")
    return ADDRESS.sub("0xADDR", buffer.getvalue().replace("internals", "torch"))


# Examples that run a whole model: TransformerDecoder's is six 512-wide layers over 32 sequences
# (about 10 CPU s here), so it runs with the slow tests.
WHOLE_MODELS = {"torch.nn.TransformerDecoder"}


def _case(name):
    if name in KNOWN:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN[name]))
    return pytest.param(name, marks=pytest.mark.slow) if name in WHOLE_MODELS else name


@pytest.mark.parametrize("name", [_case(n) for n in APIS])
def test_docstring_examples_print_what_torch_prints(name):
    statements = examples(name)
    assert statements, f"{name}'s docstring has no examples"
    expected = transcript(torch, statements)
    assert expected.strip() and "NameError" not in expected, expected
    assert_same_transcript(transcript(internals, statements), expected)


def assert_same_transcript(got, expected):
    """The same text once numbers are masked, and each number within one unit of its last
    printed digit (a float32 convolution or sum rounds its last bit by the CPU's order); integers
    and everything else exactly."""
    assert NUMBER.sub("#", got) == NUMBER.sub("#", expected), (got, expected)
    for ours, theirs in zip(NUMBER.findall(got), NUMBER.findall(expected)):
        # in decimal: 9.8910e-03 - 9.8909e-03 in binary floats is a hair above 1e-7
        unit = Decimal(repr(max(last_digit(ours), last_digit(theirs))))
        assert abs(Decimal(ours) - Decimal(theirs)) <= unit, (ours, theirs)


def test_a_different_transcript_fails():
    """The comparison sees a changed number: the same statements with another value printed."""
    statements = examples("torch.logical_not")
    changed = [s.replace("[0., 1.5, -10.]", "[1., 1.5, -10.]") for s in statements]
    assert changed != statements
    with pytest.raises(AssertionError):
        assert_same_transcript(transcript(internals, changed), transcript(torch, statements))
