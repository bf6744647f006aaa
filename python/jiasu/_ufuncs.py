"""Elementwise operations (NumPy's ufuncs) on jiasu arrays: each is the C++ engine's own function
(jiasu._core), which resolves NumPy's types (NEP 50 weak Python scalars), broadcasts and runs on the
arrays' device, and takes ``out=``. Array's operators (+, -, *, /, //, %, **, comparisons, &, |, ^, ~, <<,
>>, unary -, abs and the in-place forms) go to the same engine. See docs/arrays.md."""
from . import _core

NAMES = ("add", "subtract", "multiply", "divide", "floor_divide", "mod", "power", "maximum", "minimum",
         "arctan2", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and",
         "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor",
         "logical_not", "negative", "positive", "abs", "invert", "square", "sign", "sqrt", "exp", "exp2", "log",
         "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
         "arctan", "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite", "where", "clip")

globals().update({name: getattr(_core, name) for name in NAMES})
# NumPy's other spellings.
true_divide = divide  # noqa: F821
remainder = mod  # noqa: F821
absolute = abs  # noqa: F821
bitwise_not = invert  # noqa: F821
bitwise_invert = invert  # noqa: F821
__all__ = list(NAMES) + ["true_divide", "remainder", "absolute", "bitwise_not", "bitwise_invert"]
