# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def use_helpers(x, y, out, nested):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = f(x[i], y[i])
        nested[i] = g(x[i])

#---
@jiasu.func
def f(a, b):
    return a * b + 1

#---
@jiasu.func
def g(a):
    return f(a, a) + 0.5
