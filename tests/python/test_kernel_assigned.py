"""A local variable that some path reaches unassigned is a CompileError at the read, where Python raises
UnboundLocalError on that path; kernels that assign on every path compile and agree with Python.

The kernels below are plain Python too (NumPy arrays and ints): Python itself is the reference, both for
which reads fail and for the values the others compute.
"""
import numpy as np
import pytest

import jiasu


def unassigned_if(out, n):
    if n > 0:
        y = 1
    out[0] = y


def unassigned_elif(out, n):
    if n > 0:
        y = 1
    elif n < 0:
        y = 2
    out[0] = y


def unassigned_for(out, n):
    for i in range(n):
        y = i
    out[0] = y


def unassigned_loop_variable(out, n):
    for i in range(n):
        out[i] = 1
    out[0] = i


def unassigned_while(out, n):
    while n > 0:
        y = n
        n -= 1
    out[0] = y


def unassigned_after_break(out, n):
    for i in range(4):
        if i == n:
            break
        y = i
    out[0] = y


def unassigned_augmented(out, n):
    if n > 0:
        y = 1
    y += 1
    out[0] = y


@jiasu.func
def pick(x):
    if x > 0:
        y = x
    return y


def unassigned_in_a_device_function(out, n):
    out[0] = pick(n)


# kernel: (an n that takes the unassigned path, the function holding the read (None: the kernel), lines
#          below its first line, column, variable, lines below its first line of the first assignment)
UNASSIGNED = {
    "if": (unassigned_if, 0, None, 3, 14, "y", 2),
    "elif": (unassigned_elif, 0, None, 5, 14, "y", 2),
    "for": (unassigned_for, 0, None, 3, 14, "y", 2),
    "loop-variable": (unassigned_loop_variable, 0, None, 3, 14, "i", 1),
    "while": (unassigned_while, 0, None, 4, 14, "y", 2),
    "break": (unassigned_after_break, 0, None, 5, 14, "y", 4),
    "augmented": (unassigned_augmented, 0, None, 3, 5, "y", 2),
    "device-function": (unassigned_in_a_device_function, 0, pick, 4, 12, "y", 3),  # from its decorator's line
}


def first_line(fn):
    return getattr(fn, "__wrapped__", fn).__code__.co_firstlineno


@pytest.mark.parametrize("name", list(UNASSIGNED))
def test_python_raises_unbound_local_error_on_that_path(name):
    fn, n, where, *_ = UNASSIGNED[name]
    python = (lambda out, n: pick.__wrapped__(n)) if where is pick else fn
    with pytest.raises(UnboundLocalError):
        python(np.zeros(4, np.int64), n)


@pytest.mark.parametrize("name", list(UNASSIGNED))
def test_a_possibly_unassigned_read_is_a_compile_error_there(name):
    fn, n, where, offset, column, variable, assigned = UNASSIGNED[name]
    where = where or fn
    with pytest.raises(jiasu.CompileError) as info:
        jiasu.kernel(fn)[1, 1](np.zeros(4, np.int64), n, device="cpu")
    error = info.value
    assert (error.line, error.column) == (first_line(where) + offset, column), str(error)
    assert error.reason == (f"local variable '{variable}' may be unassigned here: it is assigned at line "
                            f"{first_line(where) + assigned}, but not on every path that reaches this line")


def test_a_read_before_any_assignment_says_so():
    def read_first(out, n):
        out[0] = y
        y = n

    with pytest.raises(jiasu.CompileError) as info:
        jiasu.kernel(read_first).specialize(np.zeros(4, np.int64), 1)
    assert info.value.reason == "local variable 'y' is used before it is assigned"
    assert info.value.line == read_first.__code__.co_firstlineno + 1


def assigned_in_both_branches(out, n):
    if n > 0:
        y = 1
    else:
        y = 2
    out[0] = y


def assigned_or_returned(out, n):
    if n > 0:
        y = n * 3
    elif n < 0:
        return
    else:
        y = 7
    out[0] = y


def assigned_by_a_literal_range(out, n):
    for i in range(4):
        y = i * n
    out[0] = y + i


def assigned_before_each_break(out, n):
    while True:
        y = n
        if n > 3:
            break
        n += 1
    out[0] = y


def assigned_before_each_continue(out, n):
    for i in range(0, 8, 2):
        if i == n:
            y = 100
            continue
        y = i
    out[0] = y


def assigned_in_the_body_before_its_read(out, n):
    for i in range(n):
        last = i * i
        if i > 0:
            out[1] = last
    out[0] = n


@pytest.mark.parametrize("fn", [assigned_in_both_branches, assigned_or_returned, assigned_by_a_literal_range,
                                assigned_before_each_break, assigned_before_each_continue,
                                assigned_in_the_body_before_its_read], ids=lambda fn: fn.__name__)
def test_kernels_that_assign_on_every_path_agree_with_python(fn):
    kernel = jiasu.kernel(fn)
    for n in (-2, 0, 1, 4, 6):
        expected = np.full(4, -1, np.int64)
        fn(expected, n)
        out = np.full(4, -1, np.int64)
        kernel[1, 1](out, n, device="cpu")
        np.testing.assert_array_equal(out, expected, err_msg=f"n={n}")
