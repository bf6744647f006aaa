"""Type stubs of jiasu._ufuncs, whose names are the C++ engine's functions, set at import (_ufuncs.py)."""
from jiasu._core import (
    add as add, subtract as subtract, multiply as multiply, divide as divide, floor_divide as floor_divide,
    mod as mod, power as power, maximum as maximum, minimum as minimum, arctan2 as arctan2, equal as equal,
    not_equal as not_equal, less as less, less_equal as less_equal, greater as greater,
    greater_equal as greater_equal, bitwise_and as bitwise_and, bitwise_or as bitwise_or, bitwise_xor as bitwise_xor,
    left_shift as left_shift, right_shift as right_shift, logical_and as logical_and, logical_or as logical_or,
    logical_xor as logical_xor, logical_not as logical_not, negative as negative, positive as positive, abs as abs,
    invert as invert, square as square, sign as sign, sqrt as sqrt, exp as exp, exp2 as exp2, log as log,
    log2 as log2, log10 as log10, log1p as log1p, expm1 as expm1, sin as sin, cos as cos, tan as tan, sinh as sinh,
    cosh as cosh, tanh as tanh, arcsin as arcsin, arccos as arccos, arctan as arctan, floor as floor, ceil as ceil,
    trunc as trunc, rint as rint, isnan as isnan, isinf as isinf, isfinite as isfinite, where as where, clip as clip)

# NumPy's other spellings.
true_divide = divide
remainder = mod
absolute = abs
bitwise_not = invert
bitwise_invert = invert
