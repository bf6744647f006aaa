# signature: float32[1] float64[1] int64
def k(x, out, n):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = f(x[i], n) + g(out[i])
#---
@jiasu.func
def f(a, b):
    s = 0.0
    for t in range(b):
        s += g(a * t)
    return s
#---
@jiasu.func
def g(v):
    if v > 0:
        return v
    return -v
