"""Python enums in kernels, as Numba types them: members of Enum and IntEnum classes used by name (``Color.red``,
``Color["red"]``) or passed as arguments, compared with ==, != and ``is`` against Python's own answers; an
IntEnum's members are ints. On both backends."""
import enum
import gc
import weakref

import numpy as np
import pytest

import jiasu
from jiasu import cuda

pytestmark = pytest.mark.usefixtures("each_backend")


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3
    crimson = 1  # an alias of red


class Planet(enum.Enum):
    EARTH = (5.976e24, 6.37814e6)
    MARS = (6.421e23, 3.3972e6)


class Shape(enum.IntEnum):
    circle = 2
    square = 500


class Level(enum.IntEnum):
    two = 2
    minus = -7


def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


MEMBERS = [Color.red, Color.green, Color.crimson, Planet.EARTH, Planet.MARS, Shape.circle, Level.two, Level.minus]


def test_members_passed_as_arguments_compare_as_in_python():
    kernel = cuda.jit(compare)
    for a in MEMBERS:
        for b in MEMBERS:
            got = np.zeros(4, np.bool_)
            expected = got.copy()
            kernel[1, 1](a, b, got)
            compare(a, b, expected)
            np.testing.assert_array_equal(got, expected, err_msg=f"{a!r} {b!r}")


def test_members_passed_are_valued_as_the_members_named_in_the_kernel():
    # Each class's members are valued once, on its first launch: classes made and dropped in turn (a new one may
    # take a dead one's address) each have their own values, and none is kept alive by the launches.
    for names in ("red green blue", "blue red green", "green blue red") * 2:
        Paint = enum.Enum("Paint", names)

        @cuda.jit
        def which(x, out):
            out[0] = x is Paint.red
            out[1] = x is Paint.green
            out[2] = x == Paint.blue

        for member in [*Paint, *Paint]:  # the second time from the class's table
            got = np.zeros(3, np.int64)
            which[1, 1](member, got)
            np.testing.assert_array_equal(got, [member is Paint.red, member is Paint.green, member is Paint.blue],
                                          err_msg=f"{names}: {member!r}")
        got = np.zeros(4, np.bool_)
        cuda.jit(compare)[1, 1](Paint.red, Paint.blue, got)
        np.testing.assert_array_equal(got, [False, True, False, True])
        dropped = weakref.ref(Paint)
        del Paint, which, member
        gc.collect()
        assert dropped() is None


def classify(x, out):
    out[0] = Color.red == Color["crimson"]
    out[1] = x > Shape.circle
    out[2] = x - Shape.square if x > Shape.square else x + Shape.circle
    out[3] = np.int16(Shape.square) * 3
    pick = Color.blue if x > 100 else Color.green
    out[4] = pick is Color.blue
    out[5] = pick == Color.green


def test_members_used_by_name_and_intenums_as_ints():
    kernel = cuda.jit(classify)
    for x in (-5, 3, 450, 550, 10**12):
        got = np.zeros(6, np.int64)
        expected = got.copy()
        kernel[1, 1](x, got)
        classify(x, expected)
        np.testing.assert_array_equal(got, expected, err_msg=str(x))


def level_of(shape):
    return Level.two if shape == Shape.circle else Level.minus


def test_a_device_function_returns_members():
    device = cuda.jit(device=True)(level_of)

    @cuda.jit
    def kernel(shapes, out):
        i = cuda.grid(1)
        if i < shapes.size:
            out[i] = device(shapes[i]) is Level.minus

    shapes = np.array([Shape.circle, Shape.square, 3, 2], np.int64)
    out = np.zeros(4, np.int64)
    kernel.forall(4)(shapes, out)
    np.testing.assert_array_equal(out, [level_of(s) is Level.minus for s in shapes])


def test_errors():
    @cuda.jit
    def arithmetic(out, a):
        out[0] = a + 1

    with pytest.raises(jiasu.CompileError, match=r"unsupported operand types for \+: enum\(Color\) and int64"):
        arithmetic[1, 1](np.zeros(1, np.int64), Color.red)

    @cuda.jit
    def missing(out):
        out[0] = Color.purple == Color.red

    with pytest.raises(jiasu.CompileError, match="'purple' is not a member of enum Color"):
        missing[1, 1](np.zeros(1, np.int64))
