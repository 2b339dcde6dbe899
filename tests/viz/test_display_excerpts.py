"""internals.display's wheel excerpts: each symbol chapter 4 quotes is found in the installed torch."""
import os
import re

import pytest
import torch

from internals.display import WIDTH, find_excerpt, show_excerpt, wheel_file

# (file in the wheel, pattern): what chapter 4 quotes
QUOTED = [
    ("ATen/native/native_functions.yaml", r"^- func: add\.out\("),
    ("ATen/native/native_functions.yaml", r"^- func: add\.Tensor\("),
    ("ATen/ops/add_meta.h", r"struct TORCH_API structured_add_Tensor"),
    ("ATen/ops/add_native.h", r"struct TORCH_API structured_ufunc_add_CPU"),
    ("ATen/TensorMeta.h", r"#define TORCH_META_FUNC\(name\)"),
    ("ATen/TensorMeta.h", r"#define TORCH_IMPL_FUNC\(name\)"),
    ("ATen/TensorIterator.h", r"void build_borrowing_binary_op\("),
    ("ATen/TensorIterator.h", r"TensorIteratorConfig& promote_inputs_to_common_dtype\("),
    ("ATen/native/BinaryOps.h", r"DECLARE_DISPATCH\(structured_binary_fn_alpha, add_stub\)"),
    ("ATen/native/BinaryOps.h", r"inline void alpha_check\("),
    ("ATen/native/DispatchStub.h", r"enum class CPUCapability"),
    ("ATen/Dispatch.h", r"#define AT_DISPATCH_SWITCH\("),
    ("ATen/native/cpu/Loops.h", r"^void cpu_kernel_vec\("),
    ("ATen/native/cpu/Loops.h", r"for \(; i <= n - 2 \* Vec::size\(\)"),
    ("ATen/cpu/vec/vec_base.h", r"static constexpr size_type size\(\)"),
    ("c10/util/Exception.h", r"#define TORCH_CHECK\(cond, \.\.\.\)"),
    ("dest/ufunc.py", r"^def compute_ufunc_cpu\("),
]


@pytest.mark.parametrize("name,pattern", QUOTED)
def test_each_quoted_symbol_is_found_at_the_line_it_names(name, pattern):
    lineno, text = find_excerpt(name, pattern, lines=3)
    with open(wheel_file(name), encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert text == "\n".join(lines[lineno - 1:lineno + 2])
    # the first line matching is the one shown: no earlier line matches
    assert re.search(pattern, lines[lineno - 1])
    assert not any(re.search(pattern, line) for line in lines[:lineno - 1])


def test_headers_come_from_torch_include_and_the_schemas_from_torchgen():
    include = os.path.join(torch.__path__[0], "include")
    assert wheel_file("ATen/ops/add_meta.h") == os.path.join(include, "ATen/ops/add_meta.h")
    assert wheel_file("ATen/native/native_functions.yaml").endswith(
        os.path.join("torchgen", "packaged", "ATen", "native", "native_functions.yaml"))
    assert wheel_file("dest/ufunc.py").endswith(os.path.join("torchgen", "dest", "ufunc.py"))


def test_until_stops_at_the_first_match_after_the_start():
    lineno, text = find_excerpt("ATen/native/DispatchStub.h", r"enum class CPUCapability", until=r"^};")
    lines = text.splitlines()
    assert lines[0].startswith("enum class CPUCapability") and lines[-1] == "};"
    assert "};" not in lines[:-1]
    assert "DEFAULT = 0," in text


def test_show_excerpt_is_headed_by_its_path_and_line_and_fits():
    source = show_excerpt("ATen/native/native_functions.yaml", r"^- func: add\.out\(", lines=4)
    lineno, _ = find_excerpt("ATen/native/native_functions.yaml", r"^- func: add\.out\(")
    text = repr(source)
    assert text.splitlines()[0] == f"# torchgen/packaged/ATen/native/native_functions.yaml:{lineno}"
    assert "structured: True" in text
    assert all(len(line) <= WIDTH for line in text.splitlines())
    cpp = repr(show_excerpt("ATen/ops/add_meta.h", r"structured_add_Tensor", lines=1))
    assert cpp.splitlines()[0].startswith("// torch/include/ATen/ops/add_meta.h:")


def test_which_picks_among_the_matches():
    name, pattern = "c10/util/Exception.h", r"#define TORCH_CHECK\(cond, \.\.\.\)"
    with open(wheel_file(name), encoding="utf-8") as f:
        numbers = [i + 1 for i, line in enumerate(f.read().splitlines()) if re.search(pattern, line)]
    assert len(numbers) > 1     # defined once per build flavour
    assert find_excerpt(name, pattern, which=-1)[0] == numbers[-1]
    assert find_excerpt(name, pattern)[0] == numbers[0]
    # the last one, a normal build's, throws through torchCheckFail (c10::Error)
    assert "torchCheckFail" in find_excerpt(name, pattern, lines=4, which=-1)[1]


def test_a_missing_file_or_symbol_is_an_error():
    with pytest.raises(FileNotFoundError, match="not in the installed torch wheel"):
        wheel_file("ATen/NoSuchHeader.h")
    with pytest.raises(LookupError, match="is not in ATen/ops/add_meta.h"):
        find_excerpt("ATen/ops/add_meta.h", r"no_such_symbol_anywhere")
