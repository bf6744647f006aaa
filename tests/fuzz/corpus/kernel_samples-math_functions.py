# signature: float32[1] float32[1]
def math_functions(a, out):
    i = jiasu.grid(1)
    x = a[i]
    r = math.sqrt(x) + math.exp(x) + math.log(x) + math.log2(x) + math.log10(x) + math.log1p(x) + math.expm1(x)
    r += math.sin(x) + math.cos(x) + math.tan(x) + math.asin(x) + math.acos(x) + math.atan(x) + math.atan2(x, 1.0)
    r += math.sinh(x) + math.cosh(x) + math.tanh(x) + math.pow(x, 2.0) + math.fabs(x)
    r += math.floor(x) + math.ceil(x) + math.trunc(x) + math.fmod(x, 2.0) + math.copysign(x, -1.0)
    r += math.hypot(x, 3.0) + math.erf(x) + math.erfc(x)
    r += math.pi + math.e + np.sqrt(x) + np.arctan2(x, 1.0) + np.abs(x)
    b = math.isnan(x) or math.isinf(x) or not math.isfinite(x)
    if b:
        r = math.nan
    if r > 1e30:
        r = math.inf
    out[i] = r
