# signature: float32[1] float32[1]
@jiasu.kernel
def specialised_twice(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = f(x[i], x[i])

#---
@jiasu.func
def f(a, b):
    return a * b + 1
