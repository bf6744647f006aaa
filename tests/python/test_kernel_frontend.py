"""Valid kernels through the front end without a GPU: ``specialize`` (parse, check, CUDA emission),
``inspect_cuda`` (the generated C++ with a ``// file:LINE  source`` comment before every statement) and
``inspect_ptx`` (the real NVRTC; skipped when NVRTC is not installed).

The kernels live in kernel_samples.py. Which lines are statements is decided by Python's own ``ast`` module,
independently of jiasu's parser.
"""
import ast
import inspect
import linecache
import os
import re
import textwrap

import ml_dtypes
import numpy as np
import pytest

import jiasu

import kernel_samples as samples
from support import needs_nvrtc


BF16 = ml_dtypes.bfloat16
SAMPLES_FILE = os.path.abspath(samples.__file__)


def zeros(dtype, *shape):
    return np.zeros(shape or (4,), dtype)


# name: (arguments, expected signature)
VALID = {
    "add": ((zeros(np.float32), zeros(np.float32), zeros(np.float32)),
            "(array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))"),
    "statements": ((zeros(np.float32), zeros(np.float32), 3), "(array(float32, 1d, C), array(float32, 1d, C), int)"),
    "int_operators": ((zeros(np.int32), zeros(np.int32), zeros(np.int32)),
                      "(array(int32, 1d, C), array(int32, 1d, C), array(int32, 1d, C))"),
    "float_operators": ((zeros(np.float32), zeros(np.float32), zeros(np.float32)),
                        "(array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))"),
    "builtins": ((zeros(np.float32), zeros(np.float32), 3), "(array(float32, 1d, C), array(float32, 1d, C), int)"),
    "math_functions": ((zeros(np.float64), zeros(np.float64)), "(array(float64, 1d, C), array(float64, 1d, C))"),
    "casts": ((zeros(np.float32), zeros(np.float64)), "(array(float32, 1d, C), array(float64, 1d, C))"),
    "globals_and_constants": ((zeros(np.float32), zeros(np.float32)), "(array(float32, 1d, C), array(float32, 1d, C))"),
    "intrinsics": ((zeros(np.int64),), "(array(int64, 1d, C))"),
    "atomics": ((zeros(np.float32), zeros(np.float64), zeros(np.int32), zeros(np.uint32), zeros(np.int32, 4, 2),
                 zeros(np.float64)),
                "(array(float32, 1d, C), array(float64, 1d, C), array(int32, 1d, C), array(uint32, 1d, C), "
                "array(int32, 2d, C), array(float64, 1d, C))"),
    "warp_ops": ((zeros(np.float32), zeros(np.float64)), "(array(float32, 1d, C), array(float64, 1d, C))"),
    "bit_ops": ((zeros(np.uint32), zeros(np.float32), zeros(np.int64)),
                "(array(uint32, 1d, C), array(float32, 1d, C), array(int64, 1d, C))"),
    "shared_and_local": ((zeros(np.float32, 16, 16), zeros(np.float32, 16, 16)),
                         "(array(float32, 2d, C), array(float32, 2d, C))"),
    "dynamic_shared": ((zeros(np.float32), zeros(np.float32)), "(array(float32, 1d, C), array(float32, 1d, C))"),
    "indexing": ((zeros(np.float64, 2, 3, 4), zeros(np.float64, 2, 3, 4)), "(array(float64, 3d, C), array(float64, 3d, C))"),
    "strided": ((zeros(np.float32, 8, 8)[::2, 1::2], zeros(np.float32, 4, 4)),
                "(array(float32, 2d, A), array(float32, 2d, C))"),
    "records": ((np.zeros(4, np.dtype([("x", np.float64), ("n", np.int32)], align=True)),
                 np.zeros(1, [("count", np.int64), ("w", np.float32, (2, 2))])[0], zeros(np.float64)),
                "(array(record(x: float64, n: int32), 1d, C), record(count: int64, w: float32[2, 2]), "
                "array(float64, 1d, C))"),
    "recursion": ((zeros(np.int64), zeros(np.int64)), "(array(int64, 1d, C), array(int64, 1d, C))"),
    "views": ((zeros(np.float32, 8), zeros(np.float32, 2, 3), zeros(np.float32, 8)),
              "(array(float32, 1d, C), array(float32, 2d, C), array(float32, 1d, C))"),
    "device_calls": ((zeros(np.float32), zeros(np.float64), zeros(np.float32), zeros(np.float64)),
                     "(array(float32, 1d, C), array(float64, 1d, C), array(float32, 1d, C), array(float64, 1d, C))"),
    "nested_functions": ((zeros(np.float32), zeros(np.float32)), "(array(float32, 1d, C), array(float32, 1d, C))"),
    "half_math": ((zeros(np.float16), zeros(BF16), zeros(np.float16), zeros(BF16)),
                  "(array(float16, 1d, C), array(bfloat16, 1d, C), array(float16, 1d, C), array(bfloat16, 1d, C))"),
    "scale_by": ((zeros(np.float32), zeros(np.float32), 2), "(array(float32, 1d, C), array(float32, 1d, C), int)"),
    "times_two": ((zeros(np.float32), zeros(np.float32)), "(array(float32, 1d, C), array(float32, 1d, C))"),
    "int8_plus_one": ((zeros(np.int8), zeros(np.int8)), "(array(int8, 1d, C), array(int8, 1d, C))"),
    "raises_and_tuples": ((zeros(np.float64), zeros(np.float64), 1), "(array(float64, 1d, C), array(float64, 1d, C), int)"),
}


# ------------------------------------------------------------------ helpers


def python_function(obj):
    """The Python function of a kernel sample or a @jiasu.func."""
    return getattr(obj, "__wrapped__", obj)


def statement_lines(fn, nested=True):
    """File line numbers of every statement of `fn` (its def included, its docstring not), by Python's ast; with
    nested=False, not those in the bodies of the functions it defines (which are emitted as functions of their own)."""
    fn = python_function(fn)
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    definition = tree.body[0]
    docstring = None
    if definition.body and isinstance(definition.body[0], ast.Expr) and isinstance(
            getattr(definition.body[0], "value", None), ast.Constant) and isinstance(definition.body[0].value.value, str):
        docstring = definition.body[0]
    inner = {id(node) for nested_def in ast.walk(definition) if nested_def is not definition and
             isinstance(nested_def, ast.FunctionDef) for statement in nested_def.body for node in ast.walk(statement)}
    return sorted({node.lineno + first - 1 for node in ast.walk(definition)
                   if isinstance(node, ast.stmt) and node is not docstring and (nested or id(node) not in inner)})


def line_comment(file, line):
    """The comment jiasu puts before the code of a Python line: '// file:LINE  <the stripped source line>'."""
    return f"// {file}:{line}  {linecache.getline(file, line).strip()}"


def kernel_body(cuda, name):
    """The generated kernel function (from its `extern "C"` line on): no runtime header, no device functions."""
    start = cuda.index(f'extern "C" __global__ void jiasu_kernel_{name}(')
    return cuda[start:]


def emitted(cuda, file, line):
    """The C++ emitted for one Python line: what follows its line comment up to the next line comment."""
    comment = f"// {file}:{line}  "
    start = cuda.index(comment)
    start = cuda.index("\n", start) + 1
    end = cuda.find("// ", start)
    return cuda[start:end if end >= 0 else len(cuda)]


def specialized(name, *args):
    kernel = jiasu.kernel(getattr(samples, name))
    signature = kernel.specialize(*(args or VALID[name][0]))
    return kernel, signature


def only_cuda(kernel):
    sources = kernel.inspect_cuda()
    assert len(sources) == 1, list(sources)
    return next(iter(sources.values()))


def sample_line(fn, offset):
    return python_function(fn).__code__.co_firstlineno + offset


# ------------------------------------------------------------------ every sample


@pytest.mark.parametrize("name", list(VALID))
def test_specialize_returns_the_signature(name):
    args, signature = VALID[name]
    kernel = jiasu.kernel(getattr(samples, name))
    assert kernel.specialize(*args) == signature
    assert list(kernel.inspect_cuda()) == [signature]


@pytest.mark.parametrize("name", list(VALID))
def test_every_statement_has_its_line_comment(name):
    kernel, _ = specialized(name)
    cuda = only_cuda(kernel)
    assert f"---- generated by jiasu from {SAMPLES_FILE}: kernel {name}" in cuda
    body = kernel_body(cuda, name)
    fn = getattr(samples, name)
    missing = [line_comment(SAMPLES_FILE, line) for line in statement_lines(fn)
               if line_comment(SAMPLES_FILE, line) not in cuda]
    assert not missing, "\n".join(missing)
    # The kernel's own statements are inside the kernel function, in source order.
    positions = [body.index(line_comment(SAMPLES_FILE, line)) for line in statement_lines(fn, nested=False)[1:]]
    assert positions == sorted(positions)


@needs_nvrtc
@pytest.mark.parametrize("name", list(VALID))
def test_ptx_compiles(name):
    kernel, signature = specialized(name)
    ptx = kernel.inspect_ptx()
    assert list(ptx) == [signature]
    text = ptx[signature]
    assert re.search(rf"\.entry\s+jiasu_kernel_{name}\s*\(", text), text[:2000]
    assert ".target sm_" in text


# ------------------------------------------------------------------ exact line comments


def test_exact_line_comments_of_the_seed_kernel():
    kernel, _ = specialized("add")
    cuda = only_cuda(kernel)
    first = samples.add.__code__.co_firstlineno
    assert f"// {SAMPLES_FILE}:{first}  def add(x, y, out):\n" in cuda
    assert f"// {SAMPLES_FILE}:{first + 1}  i = jiasu.grid(1)\n" in cuda
    assert f"// {SAMPLES_FILE}:{first + 2}  if i < out.size:\n" in cuda
    assert f"// {SAMPLES_FILE}:{first + 3}  out[i] = x[i] + y[i]\n" in cuda
    assert "jiasu::at(out_, i_) = (jiasu::at(x_, i_) + jiasu::at(y_, i_));" in emitted(cuda, SAMPLES_FILE, first + 3)


def test_line_comments_keep_elif_trailing_comments_and_semicolon_statements():
    kernel, _ = specialized("statements")
    cuda = only_cuda(kernel)
    fn = samples.statements
    assert line_comment(SAMPLES_FILE, sample_line(fn, 9)) == f"// {SAMPLES_FILE}:{sample_line(fn, 9)}  elif j > 5:"
    assert f"// {SAMPLES_FILE}:{sample_line(fn, 9)}  elif j > 5:\n" in cuda
    assert f"// {SAMPLES_FILE}:{sample_line(fn, 13)}  acc += x[j]  # a trailing comment stays in the line comment\n" in cuda
    # `else:` is not a statement: no comment of its own
    assert f"// {SAMPLES_FILE}:{sample_line(fn, 11)}  else:" not in cuda
    # the docstring is not code
    assert f"// {SAMPLES_FILE}:{sample_line(fn, 1)}" not in cuda
    # two statements on one line: one comment for each
    last = f"// {SAMPLES_FILE}:{sample_line(fn, 25)}  out[i] = acc + v + a * b + t[1] + k; out[0] = 1.0\n"
    assert cuda.count(last) == 2


def test_device_function_lines_are_commented_in_their_own_file():
    kernel, _ = specialized("device_calls")
    cuda = only_cuda(kernel)
    for fn in (samples.square, samples.sum_of_squares, samples.clamp, samples.store):
        for line in statement_lines(fn):
            assert line_comment(SAMPLES_FILE, line) in cuda, line_comment(SAMPLES_FILE, line)
    assert f"// {SAMPLES_FILE}:{sample_line(samples.square, 2)}  return x * x\n" in cuda


def test_decorated_kernel():
    tree = ast.parse(open(SAMPLES_FILE).read())
    def_line = next(node.lineno for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "decorated")
    assert samples.decorated.specialize(zeros(np.int32), zeros(np.int32)) == "(array(int32, 1d, C), array(int32, 1d, C))"
    cuda = next(iter(samples.decorated.inspect_cuda().values()))
    assert f"// {SAMPLES_FILE}:{def_line}  def decorated(x, out):\n" in cuda
    assert f"// {SAMPLES_FILE}:{def_line + 2}  out[i] = x[i] + 1\n" in cuda
    assert "@jiasu.kernel" not in kernel_body(cuda, "decorated")


# ------------------------------------------------------------------ what specific constructs emit


def test_strided_arrays_pass_their_strides():
    kernel, signature = specialized("strided")
    body = kernel_body(only_cuda(kernel), "strided")
    assert "jiasu::ArrayA<float, 2> a_" in body   # any layout: data, shape and strides
    assert "jiasu::ArrayC<float, 2> out_" in body  # C-contiguous: data and shape
    fortran = np.asfortranarray(zeros(np.float32, 4, 4))
    assert kernel.specialize(fortran, zeros(np.float32, 4, 4)) == "(array(float32, 2d, A), array(float32, 2d, C))"
    transposed = zeros(np.float32, 4, 4).T
    assert kernel.specialize(transposed, zeros(np.float32, 4, 4)) == signature  # same layout class: one entry
    assert len(kernel.inspect_cuda()) == 1


def test_shared_local_and_dynamic_shared_memory():
    kernel, _ = specialized("shared_and_local")
    body = kernel_body(only_cuda(kernel), "shared_and_local")
    assert "__shared__" in body
    assert "extern __shared__" not in body
    kernel, _ = specialized("dynamic_shared")
    body = kernel_body(only_cuda(kernel), "dynamic_shared")
    assert "extern __shared__" in body
    assert "jiasu::dynamic_shared_bytes()" in body


def test_device_functions_are_specialised_per_argument_types():
    kernel, _ = specialized("device_calls")
    cuda = only_cuda(kernel)
    for fn in ("square", "sum_of_squares", "clamp"):
        assert re.search(rf"__device__ float jiasu_fn_{fn}_\d+\(float x_", cuda), fn
        assert re.search(rf"__device__ double jiasu_fn_{fn}_\d+\(double x_", cuda), fn
    assert re.search(r"__device__ void jiasu_fn_store_\d+\(jiasu::ArrayC<float, 1> arr_", cuda)
    # nested calls: each callee is emitted before its caller, and before the kernel
    assert cuda.index("jiasu_fn_square_") < cuda.index("__device__ float jiasu_fn_sum_of_squares_")
    assert cuda.rindex("__device__") < cuda.index('extern "C" __global__')
    assert len(re.findall(r"__device__ \w+ jiasu_fn_square_\d+\(", cuda)) == 2  # float32 and float64, once each


def test_half_types():
    kernel, _ = specialized("half_math")
    body = kernel_body(only_cuda(kernel), "half_math")
    assert "jiasu::ArrayC<__half, 1> h_" in body
    assert "jiasu::ArrayC<__nv_bfloat16, 1> b_" in body
    line = sample_line(samples.half_math, 2)
    store = emitted(body, SAMPLES_FILE, line)
    assert store.strip().startswith("jiasu::at(out_h_, i_) = jiasu::cast<__half>(")
    assert "(double)" not in store and "(float)" not in store  # float16 * 2.0 stays float16 (NEP 50)


@needs_nvrtc
def test_ptx_of_intrinsics_atomics_and_warp_operations():
    ptx = {}
    for name in ("intrinsics", "atomics", "warp_ops", "dynamic_shared"):
        kernel, signature = specialized(name)
        ptx[name] = kernel.inspect_ptx()[signature]
    assert re.search(r"\bbar(rier)?\.sync", ptx["intrinsics"])
    assert "membar" in ptx["intrinsics"] or "fence" in ptx["intrinsics"]
    assert "atom." in ptx["atomics"]
    assert "shfl.sync" in ptx["warp_ops"]
    assert "vote.sync" in ptx["warp_ops"]
    assert ".extern .shared" in ptx["dynamic_shared"]


# ------------------------------------------------------------------ NEP 50: weak Python scalars


def test_float32_times_a_float_literal_stays_float32():
    kernel, _ = specialized("times_two")
    body = kernel_body(only_cuda(kernel), "times_two")
    store = emitted(body, SAMPLES_FILE, sample_line(samples.times_two, 2))
    assert "(jiasu::at(x_, i_) * 2.0f)" in store
    assert "double" not in body


def test_float64_times_a_float_literal_is_float64():
    kernel, _ = specialized("times_two", zeros(np.float64), zeros(np.float64))
    body = kernel_body(only_cuda(kernel), "times_two")
    store = emitted(body, SAMPLES_FILE, sample_line(samples.times_two, 2))
    assert "(jiasu::at(x_, i_) * 2.0)" in store and "2.0f" not in store


def test_int8_plus_an_int_literal_stays_int8():
    kernel, _ = specialized("int8_plus_one")
    body = kernel_body(only_cuda(kernel), "int8_plus_one")
    store = emitted(body, SAMPLES_FILE, sample_line(samples.int8_plus_one, 2))
    assert "(signed char)1" in store
    assert "long long" not in store and "int)" not in store


def test_two_strong_operands_promote_as_numpy():
    # int32 + float32 is float64 (np.result_type)
    kernel, signature = specialized("add", zeros(np.int32), zeros(np.float32), zeros(np.float64))
    assert signature == "(array(int32, 1d, C), array(float32, 1d, C), array(float64, 1d, C))"
    store = emitted(kernel_body(only_cuda(kernel), "add"), SAMPLES_FILE, sample_line(samples.add, 3))
    assert "((double)jiasu::at(x_, i_) + (double)jiasu::at(y_, i_))" in store


@pytest.mark.parametrize("value, c_type", [(2, "long long"), (2.5, "double")], ids=["int", "float"])
def test_python_number_arguments_are_weak(value, c_type):
    kernel, signature = specialized("scale_by", zeros(np.float32), zeros(np.float32), value)
    # A Python number is a weak int64 / float64; the signature names it "int" / "float", apart from NumPy's
    # strong int64 / float64.
    scalar = "int" if isinstance(value, int) else "float"
    assert signature == f"(array(float32, 1d, C), array(float32, 1d, C), {scalar})"
    body = kernel_body(only_cuda(kernel), "scale_by")
    assert f"{c_type} s_)" in body  # the parameter keeps the Python number's full width ...
    store = emitted(body, SAMPLES_FILE, sample_line(samples.scale_by, 2))
    assert "(jiasu::at(x_, i_) * (float)s_)" in store  # ... but the product is float32, as NEP 50 says
    assert "double" not in store


def test_python_bool_argument_is_bool():
    kernel, signature = specialized("scale_by", zeros(np.float32), zeros(np.float32), True)
    assert signature == "(array(float32, 1d, C), array(float32, 1d, C), bool)"
    assert "bool s_)" in kernel_body(only_cuda(kernel), "scale_by")


@pytest.mark.parametrize("value, name, c_type", [(np.int32(3), "int32", "int"), (np.float32(2), "float32", "float"),
                                                  (np.uint8(1), "uint8", "unsigned char"), (np.bool_(True), "bool", "bool"),
                                                  (np.float16(1), "float16", "__half")],
                         ids=["int32", "float32", "uint8", "bool", "float16"])
def test_numpy_scalar_argument_has_its_own_dtype(value, name, c_type):
    kernel, signature = specialized("store_scalar", zeros(np.float64), value)
    assert signature == f"(array(float64, 1d, C), {name})"
    assert f"{c_type} s_)" in kernel_body(only_cuda(kernel), "store_scalar")


def test_numpy_int32_scalar_is_strong():
    # float32 * int32 is float64 for NumPy scalars (np.result_type): no NEP 50 weakness here
    kernel, signature = specialized("scale_by", zeros(np.float32), zeros(np.float32), np.int32(2))
    assert signature == "(array(float32, 1d, C), array(float32, 1d, C), int32)"
    body = kernel_body(only_cuda(kernel), "scale_by")
    assert "int s_)" in body
    store = emitted(body, SAMPLES_FILE, sample_line(samples.scale_by, 2))
    assert "(double)" in store


def test_weak_and_strong_int64_are_two_signatures():
    kernel = jiasu.kernel(samples.scale_by)
    weak = kernel.specialize(zeros(np.float32), zeros(np.float32), 2)
    strong = kernel.specialize(zeros(np.float32), zeros(np.float32), np.int64(2))
    assert weak == "(array(float32, 1d, C), array(float32, 1d, C), int)"
    assert strong == "(array(float32, 1d, C), array(float32, 1d, C), int64)"
    sources = kernel.inspect_cuda()
    assert set(sources) == {weak, strong}
    line = sample_line(samples.scale_by, 2)
    # a Python int is weak: float32 * int is float32 ...
    assert "double" not in emitted(kernel_body(sources[weak], "scale_by"), SAMPLES_FILE, line)
    # ... np.int64 is strong: float32 * int64 is float64
    assert "(double)" in emitted(kernel_body(sources[strong], "scale_by"), SAMPLES_FILE, line)
    # the same for floats: a Python float vs np.float64, and np.float32
    kernel.specialize(zeros(np.float32), zeros(np.float32), 2.0)
    kernel.specialize(zeros(np.float32), zeros(np.float32), np.float64(2.0))
    kernel.specialize(zeros(np.float32), zeros(np.float32), np.float32(2.0))
    assert set(kernel.inspect_cuda()) == {weak, strong,
                                          "(array(float32, 1d, C), array(float32, 1d, C), float)",
                                          "(array(float32, 1d, C), array(float32, 1d, C), float64)",
                                          "(array(float32, 1d, C), array(float32, 1d, C), float32)"}


# ------------------------------------------------------------------ one specialisation per signature


def test_one_specialisation_per_distinct_argument_types():
    kernel = jiasu.kernel(samples.times_two)
    s32 = kernel.specialize(zeros(np.float32), zeros(np.float32))
    s64 = kernel.specialize(zeros(np.float64), zeros(np.float64))
    assert s32 == "(array(float32, 1d, C), array(float32, 1d, C))"
    assert s64 == "(array(float64, 1d, C), array(float64, 1d, C))"
    sources = kernel.inspect_cuda()
    assert set(sources) == {s32, s64}  # in no particular order
    assert "jiasu::ArrayC<float, 1> x_" in sources[s32]
    assert "jiasu::ArrayC<double, 1> x_" in sources[s64]
    # the same types again (other shapes and values, same dtypes and ndim) add nothing
    assert kernel.specialize(zeros(np.float32, 100), np.ones(7, np.float32)) == s32
    assert kernel.specialize(zeros(np.float64), zeros(np.float64)) == s64
    assert len(kernel.inspect_cuda()) == 2
    # a non-contiguous view is another signature
    s_view = kernel.specialize(zeros(np.float32, 8)[::2], zeros(np.float32))
    assert s_view == "(array(float32, 1d, A), array(float32, 1d, C))"
    assert len(kernel.inspect_cuda()) == 3


def test_python_int_and_float_are_separate_signatures():
    kernel = jiasu.kernel(samples.scale_by)
    kernel.specialize(zeros(np.float32), zeros(np.float32), 1)
    kernel.specialize(zeros(np.float32), zeros(np.float32), 10 ** 12)  # another value, same type
    kernel.specialize(zeros(np.float32), zeros(np.float32), 1.0)
    assert set(kernel.inspect_cuda()) == {"(array(float32, 1d, C), array(float32, 1d, C), int)",
                                          "(array(float32, 1d, C), array(float32, 1d, C), float)"}


@needs_nvrtc
def test_ptx_per_signature():
    kernel = jiasu.kernel(samples.times_two)
    s32 = kernel.specialize(zeros(np.float32), zeros(np.float32))
    s64 = kernel.specialize(zeros(np.float64), zeros(np.float64))
    ptx = kernel.inspect_ptx()
    assert set(ptx) == {s32, s64}
    f32, f64 = ptx[s32], ptx[s64]
    assert "st.global.f32" in f32 and ".f64" not in f32
    assert "st.global.f64" in f64


def test_kernels_are_independent_objects():
    first = jiasu.kernel(samples.times_two)
    second = jiasu.kernel(samples.times_two)
    first.specialize(zeros(np.float32), zeros(np.float32))
    assert second.inspect_cuda() == {}
    assert first.name == "times_two"
