"""Malformed kernels raise jiasu.CompileError at the right place, from ``k.specialize(...)`` (no GPU needed).

Every bad kernel below is a real function of this file (the front end reads source text with inspect). A case
names the line of the error as an offset from the line of a function's ``def`` (``co_firstlineno``), so the
expectations survive edits elsewhere in the file, and the column exactly. Each check also verifies
``.file``, a key phrase of ``.reason``, and the formatted message::

    file:line:column: error: reason
        <source line>
        ^
"""
import linecache
import math  # noqa: F401  (the kernels below use it)
import os
import textwrap

import ml_dtypes
import numpy as np
import pytest

import jiasu

import kernel_samples

F32 = np.zeros(4, np.float32)
I32 = np.zeros(4, np.int32)
M2 = np.zeros((2, 2), np.float32)
LST = [1, 2]  # a list global: not usable in kernels
SCALE = 2.0   # a usable global


def located(fn, offset):
    """The file line `offset` lines below the `def` of `fn` (or its first decorator, if decorated)."""
    code = getattr(fn, "__wrapped__", fn).__code__
    return code.co_firstlineno + offset


def check_error(error, fn, offset, column, phrase):
    """`error` is at `offset` lines below `fn`'s first line, at `column`, in `fn`'s file, and says `phrase`."""
    code = getattr(fn, "__wrapped__", fn).__code__
    line = code.co_firstlineno + offset
    assert os.path.samefile(error.file, code.co_filename), (error.file, code.co_filename)
    assert (error.line, error.column) == (line, column), f"got {error.line}:{error.column}, want {line}:{column}: {error}"
    assert phrase in error.reason, error.reason
    check_format(error)


def check_format(error):
    """str(error) is the header, the source line indented by four spaces, and a caret under the column."""
    source_line = linecache.getline(error.file, error.line).rstrip("\n")
    assert source_line, f"no line {error.line} in {error.file}"
    lines = str(error).split("\n")
    assert lines[0] == f"{error.file}:{error.line}:{error.column}: error: {error.reason}"
    assert lines[1] == "    " + source_line
    # The caret keeps tabs of the source line so that it lines up; the kernels here use spaces only.
    assert lines[2] == " " * (4 + error.column - 1) + "^", repr(lines[2])
    assert len(lines) == 3, str(error)


def compile_error(fn, *args):
    kernel = fn if isinstance(fn, jiasu._core.KernelFunction) else jiasu.kernel(fn)
    with pytest.raises(jiasu.CompileError) as info:
        kernel.specialize(*args)
    return info.value


# ===================================================================== unsupported syntax (the parser)


def bad_class(a):
    class Inner:
        pass


def bad_lambda(a):
    f = lambda v: v  # noqa: E731


def bad_with(a):
    with a:
        pass


def bad_try(a):
    try:
        a[0] = 1.0
    except Exception:
        pass


def bad_raise(a):
    if a[0] > 0:
        raise ValueError(a[0])


def bad_import(a):
    import math  # noqa: F401


def bad_from_import(a):
    from math import sqrt  # noqa: F401


def bad_global(a):
    global SCALE


def _make_bad_nonlocal():
    n = 1

    def bad_nonlocal(a):
        nonlocal n

    return bad_nonlocal


bad_nonlocal = _make_bad_nonlocal()


def bad_del(a):
    x = 1
    del x


def bad_assert(a):
    assert a[0] > 0


def bad_yield(a):
    yield a[0]


def bad_list_display(a):
    b = [1, 2]


def bad_dict(a):
    b = {1: 2}


def bad_set(a):
    b = {1, 2}


def bad_generator(a):
    b = sum(v for v in range(3))


def bad_list_comprehension(a):
    b = [v for v in range(3)]


def bad_store_view(a):
    a[0] = a[1:3]


def bad_float_step(a):
    a[0] = a[::0.5][0]


def bad_starred(a):
    x, *rest = 1, 2, 3


def bad_walrus(a):
    if (n := a.size) > 0:
        pass


def bad_string(a):
    s = 'text'


def bad_fstring(a):
    s = f'{a}'


def bad_default(a, b=1):
    pass


def bad_varargs(a, *rest):
    pass


def bad_kwargs(a, **options):
    pass


def bad_nested_def_capture(a):
    x = a[0]

    def helper():
        return x

    a[1] = helper()


def bad_attribute_store(a):
    a.x = 1


# ===================================================================== names, types, statements (the checker)


def bad_undefined(a):
    a[0] = undefined_name  # noqa: F821


def bad_type_conflict(a):
    x = 0
    if a[0] > 0:
        x = a[0]


def bad_returns_value(a):
    return 1


def bad_nested_return(a):
    for i in range(3):
        if i > 1:
            return i


def takes_two(a, b):
    a[0] = b[0]


def bad_list_global(a):
    a[0] = LST[0]


def bad_call_number(a, n):
    a[0] = n(1)


def bad_call_module(a):
    a[0] = math(1)


def bad_store_into_row(a):
    a[0] = 1.0


def bad_float_index(a):
    a[0] = a[1.5]


def bad_store_float(a, out):
    out[0] = a[0]


def bad_for_number(a):
    for v in abs(a[0]):
        pass


def bad_for_else(a):
    for i in range(3):
        pass
    else:
        pass


def bad_while_else(a):
    while a[0] > 0:
        a[0] -= 1
    else:
        pass


def bad_range_float(a):
    for i in range(a[0]):
        pass


def bad_shared_shape(a, n):
    s = jiasu.shared.array(n, np.float32)


def bad_local_dynamic(a):
    s = jiasu.local.array(0, np.float32)


def bad_shared_dtype(a):
    s = jiasu.shared.array(4, a)


def bad_atomic_add(a):
    jiasu.atomic.add(a, 0, 1)


def bad_atomic_inc(a):
    jiasu.atomic.inc(a, 0, 1)


def bad_grid4(a):
    i = jiasu.grid(4)


def bad_gridsize_variable(a, n):
    i = jiasu.gridsize(n)


def bad_jiasu_attribute(a):
    a[0] = jiasu.nosuch


def bad_math_attribute(a):
    a[0] = math.nosuch(a[1])


def bad_atomic_name(a):
    jiasu.atomic.mul(a, 0, 1)


def bad_none(a):
    x = None


def bad_is(a, n):
    if n is n:
        pass


def bad_array_alias(a):
    b = a


def bad_unpack(a):
    i, j = jiasu.grid(3)


def bad_array_condition(a):
    if a:
        pass


def bad_aug_narrowing(a, n):
    n += a[0]


def bad_literal_range(a):
    a[0] = a[1] + 300


def bad_shfl_int8(a):
    x = jiasu.shfl_sync(0xFFFFFFFF, a[0], 0)


def bad_math_arity(a):
    a[0] = math.atan2(a[1])


def bad_multiline(a):
    a[0] = (a[1] +
            undefined_name)  # noqa: F821


# ===================================================================== device functions


@jiasu.func
def dev_bare_and_valued(x):
    if x > 0:
        return
    return x


def bad_calls_bare_and_valued(a):
    a[0] = dev_bare_and_valued(a[1])


@jiasu.func
def dev_missing_return(x):
    if x > 0:
        return x


def bad_calls_missing_return(a):
    a[0] = dev_missing_return(a[1])


@jiasu.func
def dev_ping(x):
    return dev_pong(x)


@jiasu.func
def dev_pong(x):
    return dev_ping(x - 1)


def bad_mutual_recursion(a):
    a[0] = dev_ping(a[1])


@jiasu.func
def dev_self_recursion(x):
    return dev_self_recursion(x)


def bad_self_recursion(a):
    a[0] = dev_self_recursion(a[1])


@jiasu.func
def dev_arity(x):
    return x


def bad_device_argument_count(a):
    a[0] = dev_arity(1, 2)


@jiasu.func
def dev_with_default(x, y=2):
    return x


def bad_device_default(a):
    a[0] = dev_with_default(a[1])


def bad_store_via_other_file(ints, a):
    kernel_samples.store(ints, 0, a[0])


def bad_store_via_imported(ints, a):
    store(ints, 0, a[0])


store = kernel_samples.store


# ===================================================================== the table

# (kernel, arguments, function that `offset` counts from (None: the kernel), offset, column, phrase)
CASES = {
    # unsupported syntax
    "class": (bad_class, (F32,), None, 1, 5, "'class' is not supported in jiasu kernels"),
    "lambda": (bad_lambda, (F32,), None, 1, 9, "'lambda' is not supported in jiasu kernels"),
    "with": (bad_with, (F32,), None, 1, 5, "'with' is not supported"),
    "try": (bad_try, (F32,), None, 1, 5, "'try' is not supported"),
    "raise": (bad_raise, (F32,), None, 2, 26, "the message of an exception raised in a kernel must be a string constant"),
    "import": (bad_import, (F32,), None, 1, 5, "'import' is not supported"),
    "from-import": (bad_from_import, (F32,), None, 1, 5, "'from' is not supported"),
    "global": (bad_global, (F32,), None, 1, 5, "'global' is not supported"),
    "nonlocal": (bad_nonlocal, (F32,), None, 1, 9, "'nonlocal' is not supported"),
    "del": (bad_del, (F32,), None, 2, 5, "'del' is not supported"),
    "assert": (bad_assert, (F32,), None, 1, 5, "'assert' is not supported"),
    "yield": (bad_yield, (F32,), None, 1, 5, "'yield' is not supported"),
    "list-display": (bad_list_display, (F32,), None, 1, 9, "list displays are not supported"),
    "dict": (bad_dict, (F32,), None, 1, 9, "dict and set displays are not supported"),
    "set": (bad_set, (F32,), None, 1, 9, "dict and set displays are not supported"),
    "generator": (bad_generator, (F32,), None, 1, 15, "comprehensions and generator expressions are not supported"),
    # A list comprehension is a list display in Python's grammar; the message says so.
    "list-comprehension": (bad_list_comprehension, (F32,), None, 1, 9, "list displays are not supported"),
    "store-view": (bad_store_view, (F32,), None, 1, 5,
                   "cannot store array(float32, 1d, A) into an element of array(float32, 1d, C) 'a'"),
    "float-step": (bad_float_step, (F32,), None, 1, 16, "slice indices must be integers, not float64"),
    "starred": (bad_starred, (F32,), None, 1, 8, "starred expressions ('*') are not supported"),
    "walrus": (bad_walrus, (F32,), None, 1, 11, "assignment expressions (':=') are not supported"),
    "string": (bad_string, (F32,), None, 1, 9, "strings are not supported"),
    "f-string": (bad_fstring, (F32,), None, 1, 9, "f-strings are not supported"),
    "default-arg": (bad_default, (F32, 1), None, 0, 21, "default parameter values are not supported"),
    "varargs": (bad_varargs, (F32,), None, 0, 21, "'*rest' is for device functions: a kernel takes one argument"),
    "kwargs": (bad_kwargs, (F32,), None, 0, 19, "keyword parameters ('**') are not supported"),
    "nested-def-capture": (bad_nested_def_capture, (F32,), None, 4, 16, "cannot capture 'x': variable 'x' of "
                           "'bad_nested_def_capture' is not a constant"),
    "attribute-store": (bad_attribute_store, (F32,), None, 1, 5,
                        "cannot assign to attribute 'x' of array(float32, 1d, C) 'a'"),
    # names, types and statements
    "undefined-name": (bad_undefined, (F32,), None, 1, 12, "name 'undefined_name' is not defined"),
    "kernel-returns-value": (bad_returns_value, (F32,), None, 1, 5, "kernels cannot return a value"),
    "nested-return-value": (bad_nested_return, (F32,), None, 3, 13, "kernels cannot return a value"),
    "list-global": (bad_list_global, (F32,), None, 1, 12, "global 'LST' is a list; kernels can use numbers"),
    "call-number": (bad_call_number, (F32, 3), None, 1, 12, "'n' is not callable: it is int64"),
    "call-module": (bad_call_module, (F32,), None, 1, 12, "'math' is not callable"),
    "store-into-row": (bad_store_into_row, (M2,), None, 1, 5, "cannot assign to a view of array(float32, 2d, C) 'a'"),
    "float-index": (bad_float_index, (F32,), None, 1, 14, "array indices must be integers, not float64"),
    "store-float-into-int": (bad_store_float, (F32, I32), None, 1, 5,
                             "cannot store float32 into an element of array(int32, 1d, C) 'out'"),
    "for-over-number": (bad_for_number, (F32,), None, 1, 14, "for loops iterate over range(...), 1-D arrays"),
    "for-else": (bad_for_else, (F32,), None, 1, 5, "for/else is not supported"),
    "while-else": (bad_while_else, (F32,), None, 1, 5, "while/else is not supported"),
    "range-of-float": (bad_range_float, (F32,), None, 1, 20, "range() needs an integer, not float32"),
    "shared-shape-not-constant": (bad_shared_shape, (F32, 4), None, 1, 28, "needs a shape known at compile time"),
    "local-dynamic": (bad_local_dynamic, (F32,), None, 1, 27, "jiasu.local.array() needs positive dimensions"),
    "shared-dtype": (bad_shared_dtype, (F32,), None, 1, 31, "jiasu.shared.array() needs a dtype such as jiasu.float32"),
    "atomic-int8": (bad_atomic_add, (np.zeros(4, np.int8),), None, 1, 22, "does not support int8 arrays"),
    "atomic-bfloat16": (bad_atomic_add, (np.zeros(4, ml_dtypes.bfloat16),), None, 1, 22,
                        "jiasu.atomic.add() does not support bfloat16 arrays"),
    "atomic-inc-signed": (bad_atomic_inc, (I32,), None, 1, 22, "jiasu.atomic.inc() does not support int32 arrays"),
    "grid-4": (bad_grid4, (F32,), None, 1, 20, "jiasu.grid() needs a constant 1, 2 or 3"),
    "gridsize-variable": (bad_gridsize_variable, (F32, 2), None, 1, 24, "jiasu.gridsize() needs a constant"),
    "jiasu-nosuch": (bad_jiasu_attribute, (F32,), None, 1, 18, "'jiasu.nosuch' is not supported in kernels"),
    "math-nosuch": (bad_math_attribute, (F32,), None, 1, 17, "'math.nosuch' is not supported in kernels"),
    "atomic-nosuch": (bad_atomic_name, (F32,), None, 1, 18, "'jiasu.atomic.mul' is not supported"),
    "none-value": (bad_none, (F32,), None, 1, 9, "None is not supported here"),
    "is-operator": (bad_is, (F32, 1), None, 1, 10, "'is' is not supported in kernels"),
    "array-alias": (bad_array_alias, (F32,), None, 1, 5, "arrays cannot be copied or aliased"),
    "unpack-count": (bad_unpack, (F32,), None, 1, 5, "cannot unpack a tuple of 3 values into 2 targets"),
    "array-condition": (bad_array_condition, (F32,), None, 1, 8, "an array has no truth value"),
    "aug-assign-narrowing": (bad_aug_narrowing, (F32, 1), None, 1, 5,
                             "'n += ...' gives float32, which cannot be stored back into int64"),
    "literal-out-of-bounds": (bad_literal_range, (np.zeros(4, np.uint8),), None, 1, 19,
                              "Python integer 300 is out of bounds for uint8"),
    "shfl-int8": (bad_shfl_int8, (np.zeros(4, np.int8),), None, 1, 37, "not int8"),
    "math-arity": (bad_math_arity, (F32,), None, 1, 12, "math.atan2() takes 2 arguments (1 given)"),
    "multi-line-statement": (bad_multiline, (F32,), None, 2, 13, "name 'undefined_name' is not defined"),
    # device functions: the error is in the device function's own source when that is where it lies
    "device-bare-and-valued-returns": (bad_calls_bare_and_valued, (F32,), dev_bare_and_valued, 3, 9,
                                       "function 'dev_bare_and_valued' returns float32 at line"),
    "device-missing-return": (bad_calls_missing_return, (F32,), dev_missing_return, 1, 1,
                              "can reach its end without returning a value"),
    "device-mutual-recursion": (bad_mutual_recursion, (F32,), dev_pong, 2, 12,
                                "recursive call to 'dev_ping' through another function: in kernels a function may "
                                "call itself, not one of its callers"),
    "device-self-recursion": (bad_self_recursion, (F32,), dev_self_recursion, 2, 12,
                              "recursive call to 'dev_self_recursion'"),
    "device-argument-count": (bad_device_argument_count, (F32,), None, 1, 12, "dev_arity() takes 1 argument (2 given)"),
    "device-default-arg": (bad_device_default, (F32,), dev_with_default, 1, 26,
                           "default parameter values are not supported"),
    "user-module-global": (bad_store_via_other_file, (I32, F32), None, 1, 5,
                           "global 'kernel_samples' is a module kernel_samples; kernels can use"),
    "device-in-other-file": (bad_store_via_imported, (I32, F32), kernel_samples.store, 2, 5,
                             "cannot store float32 into an element of array(int32, 1d, C) 'arr'"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_kernel(name):
    fn, args, where, offset, column, phrase = CASES[name]
    error = compile_error(fn, *args)
    check_error(error, where or fn, offset, column, phrase)


def test_there_are_many_cases():
    assert len(CASES) >= 35


# ===================================================================== suggestions compile when followed


@jiasu.func
def helper_at_module_level(v):
    return v


def followed_lambda(a):
    a[0] = helper_at_module_level(a[1])


def followed_list_display(a):
    b = (1, 2)
    c = jiasu.local.array(2, np.float32)
    c[0] = b[1]
    a[0] = c[0]


def followed_is(a, n):
    if n == n:
        pass


def followed_array_condition(a):
    if a[0]:
        pass


def followed_array_alias(a):
    b = jiasu.local.array(4, np.float32)
    s = jiasu.shared.array(4, np.float32)
    b[0] = a[0]
    s[0] = b[0]


def followed_store_float(a, out):
    out[0] = jiasu.int32(a[0])


def followed_shared_dtype(a):
    s = jiasu.shared.array(4, jiasu.float32)


# case: (the code the message suggests, a kernel that follows it)
FOLLOWED = {
    "lambda": ("write a @jiasu.func at module level instead", followed_lambda),
    "list-display": ("use a tuple, or jiasu.local.array", followed_list_display),
    "is-operator": ("compare numbers with == or !=", followed_is),
    "array-condition": ("compare its elements instead", followed_array_condition),
    "array-alias": ("only jiasu.shared.array(...) and jiasu.local.array(...) can be assigned", followed_array_alias),
    "store-float-into-int": ("e.g. with jiasu.int32(...)", followed_store_float),
    "shared-dtype": ("needs a dtype such as jiasu.float32", followed_shared_dtype),
}


@pytest.mark.parametrize("name", list(FOLLOWED))
def test_a_suggestion_compiles_when_followed(name):
    fn, args = CASES[name][:2]
    suggestion, followed = FOLLOWED[name]
    assert suggestion in compile_error(fn, *args).reason
    jiasu.kernel(followed).specialize(*args)


_CONVERTING_MODULE = """\
{imports}


{decorator}
def k(a, out):
    for i in range(a.size):
        out[i] = a[i] * 2
"""


@pytest.mark.parametrize("imports, decorator, suggested", [
    ("import jiasu", "@jiasu.kernel", "jiasu.int32"),
    ("import jiasu as jk", "@jk.kernel(debug=True)", "jk.int32"),
    ("import numpy as np\nfrom jiasu import kernel", "@kernel", "np.int32"),
    ("from jiasu import kernel", "@kernel", "jiasu.int32"),
], ids=["jiasu", "alias", "numpy", "neither"])
def test_the_suggested_conversion_is_spelled_as_the_module_imports_it(tmp_path, imports, decorator, suggested):
    source = _CONVERTING_MODULE.format(imports=imports, decorator=decorator)
    kernel, _ = _function_from_file(tmp_path, source, "k", [])
    reason = compile_error(kernel, F32, I32).reason
    code = reason[reason.index("e.g. with ") + len("e.g. with "):reason.index("(...)")]
    assert code == suggested, reason
    followed = source.replace("a[i] * 2", f"{code}(a[i] * 2)")
    if "after `import jiasu`" in reason:
        followed = "import jiasu\n" + followed
    (tmp_path / "followed").mkdir()
    kernel, _ = _function_from_file(tmp_path / "followed", followed, "k", [])
    a = np.array([1.25, -2.75, 3.5, 7.0], np.float32)
    out = np.full(4, -99, np.int32)
    kernel[1, 1](a, out, device="cpu")
    np.testing.assert_array_equal(out, (a * 2).astype(np.int32))


# ===================================================================== messages with more to check


def test_type_conflict_shows_both_types_and_both_places():
    error = compile_error(bad_type_conflict, F32)
    check_error(error, bad_type_conflict, 3, 9, "variable 'x' was int64")
    assert error.reason == f"variable 'x' was int64 (line {located(bad_type_conflict, 1)}) but is assigned float32 here"


def test_type_conflict_depends_on_the_signature():
    # The same kernel is fine when the array holds int64, the type the literal 0 gave x ...
    assert jiasu.kernel(bad_type_conflict).specialize(np.zeros(4, np.int64)) == "(array(int64, 1d, C))"
    # ... and a variable has exactly one type: int32 is another type, even though int64 holds it.
    error = compile_error(bad_type_conflict, I32)
    check_error(error, bad_type_conflict, 3, 9, "was int64 (line")
    assert error.reason.endswith("but is assigned int32 here")


def test_device_bare_return_names_the_valued_return_line():
    error = compile_error(bad_calls_bare_and_valued, F32)
    assert f"returns float32 at line {located(dev_bare_and_valued, 4)} but returns nothing here" in error.reason


@pytest.mark.parametrize("args", [(F32,), (F32, F32, F32), ()], ids=["fewer", "more", "none"])
def test_wrong_number_of_arguments_is_a_type_error_as_in_python(args):
    with pytest.raises(TypeError) as python_error:
        takes_two(*args)  # Python's own words for the same call
    with pytest.raises(TypeError) as info:
        jiasu.kernel(takes_two).specialize(*args)
    assert not isinstance(info.value, jiasu.CompileError)
    code = takes_two.__code__
    assert str(info.value) == f"{python_error.value} (defined at {code.co_filename}:{code.co_firstlineno}:1)"


def test_wrong_number_of_launch_arguments_is_a_type_error():
    out = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"^takes_two\(\) missing 1 required positional argument: 'b' \(defined at "):
        jiasu.kernel(takes_two)[1, 1](out, device="cpu")
    assert not out.any()


def test_wrong_number_of_device_function_arguments_stays_a_compile_error_in_the_kernel():
    error = compile_error(bad_device_argument_count, F32)
    check_error(error, bad_device_argument_count, 1, 12, "dev_arity() takes 1 argument (2 given)")


def test_keyword_arguments_to_specialize_are_a_type_error():
    with pytest.raises(TypeError, match="specialize"):
        jiasu.kernel(takes_two).specialize(a=F32, b=F32)


def test_an_error_in_an_imported_device_function_points_into_its_file():
    error = compile_error(bad_store_via_imported, I32, F32)
    assert os.path.samefile(error.file, kernel_samples.__file__)
    check_error(error, kernel_samples.store, 2, 5, "'arr'")


def test_errors_repeat_and_do_not_poison_other_signatures():
    kernel = jiasu.kernel(bad_store_float)
    for _ in range(2):  # a failed signature is not cached as compiled
        with pytest.raises(jiasu.CompileError):
            kernel.specialize(F32, I32)
    assert kernel.specialize(F32, F32) == "(array(float32, 1d, C), array(float32, 1d, C))"
    assert len(kernel.inspect_cuda()) == 1
    with pytest.raises(jiasu.CompileError) as info:
        kernel.specialize(F32, I32)
    check_error(info.value, bad_store_float, 1, 5, "cannot store float32")


def test_compile_error_is_a_jiasu_error_with_its_parts():
    error = compile_error(bad_undefined, F32)
    assert isinstance(error, jiasu.JiasuError) and isinstance(error, RuntimeError)
    assert isinstance(error.line, int) and isinstance(error.column, int)
    assert isinstance(error.file, str) and isinstance(error.reason, str)
    assert "\n" not in error.reason


# ===================================================================== decorated kernels


def _keep(fn):
    """A decorator under @jiasu.kernel that hands the Python function to the tests."""
    KEPT[fn.__name__] = fn
    return fn


KEPT = {}


@jiasu.kernel
@_keep
def decorated_bad(a):
    a[0] = undefined_name  # noqa: F821


def test_decorated_kernel_counts_lines_from_the_decorator():
    error = compile_error(decorated_bad, F32)
    # co_firstlineno of a decorated function is its first decorator's line
    check_error(error, KEPT["decorated_bad"], 3, 12, "name 'undefined_name' is not defined")


# ===================================================================== code Python itself rejects


def _function_from_file(directory, source, name, stub_replacements):
    """A function whose source file holds `source` although Python compiled a harmless variant of it.

    `break` outside a loop is a SyntaxError for Python, so no importable file can hold such a kernel; this
    builds one: the file on disk has the bad code, the function object comes from the same file name with
    the same line numbers, which is all inspect needs to hand jiasu the bad source."""
    path = directory / f"{name}_source.py"
    path.write_text(source)
    stub = source
    for old, new in stub_replacements:
        stub = stub.replace(old, new)
    namespace = {"__name__": f"{name}_source"}
    exec(compile(stub, str(path), "exec"), namespace)
    linecache.checkcache(str(path))
    return namespace[name], str(path)


def test_break_outside_loop(tmp_path):
    source = textwrap.dedent("""\
        import jiasu


        def k(a):
            a[0] = 1.0
            break
        """)
    fn, path = _function_from_file(tmp_path, source, "k", [("break", "pass")])
    error = compile_error(fn, F32)
    assert error.file == path
    check_error(error, fn, 2, 5, "'break' outside loop")


def test_continue_in_for_else(tmp_path):
    source = textwrap.dedent("""\
        def k(a):
            for i in range(3):
                pass
            else:
                continue
        """)
    fn, path = _function_from_file(tmp_path, source, "k", [("continue", "pass")])
    error = compile_error(fn, F32)
    check_error(error, fn, 4, 9, "'continue' not properly in loop")


# ===================================================================== arguments specialize cannot take


@pytest.mark.parametrize("value", ["text", None, [1, 2]], ids=["str", "None", "list"])
def test_unsupported_argument_is_a_type_error(value):
    with pytest.raises(TypeError, match="got (str|NoneType|list)"):
        jiasu.kernel(takes_two).specialize(F32, value)


def test_unsupported_argument_message_names_the_argument():
    with pytest.raises(TypeError) as info:
        jiasu.kernel(takes_two).specialize(F32, "text")
    assert "argument 1" in str(info.value) and "takes_two" in str(info.value)


def test_too_large_python_int_is_rejected_by_specialize():
    with pytest.raises((ValueError, OverflowError, jiasu.JiasuError)):
        jiasu.kernel(kernel_samples.store_scalar).specialize(F32, 2 ** 70)


@pytest.mark.parametrize("value, described", [(np.complex64(1), "complex64"), (1j, "complex128"),
                                               (np.zeros(4, np.complex64), "array(complex64, 1d, C)")],
                         ids=["numpy-scalar", "python-complex", "array"])
def test_complex_arguments_specialise_the_kernel(value, described):
    def store_scalar(out, b):
        out[0] = b

    def store_first(out, b):
        out[0] = b[0]

    kernel = jiasu.kernel(store_first if isinstance(value, np.ndarray) else store_scalar)
    kernel.specialize(np.zeros(1, np.complex128), value)
    assert any(described in signature for signature in kernel.inspect_ptx()), list(kernel.inspect_ptx())


@pytest.mark.gpu
def test_launch_raises_the_compile_error():
    kernel = jiasu.kernel(bad_undefined)
    out = jiasu.zeros(4, np.float32)
    with pytest.raises(jiasu.CompileError) as info:
        kernel[1, 4](out)
    check_error(info.value, bad_undefined, 1, 12, "name 'undefined_name' is not defined")
