# signature: float64[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def int_helpers(a, b, signs, gcds, mixed):
    i = jiasu.grid(1)
    if i < a.size:
        signs[i] = f(a[i])
        gcds[i] = g(a[i], b[i])
        # The same function on int32 and on float64 arguments within one kernel.
        mixed[i] = helper(a[i], b[i]) + helper(0.5 * a[i], 2.0)

#---
@jiasu.func
def f(v):
    if v > 0:
        return 1
    elif v < 0:
        return -1
    return 0

#---
@jiasu.func
def g(a, b):
    while b != 0:
        a, b = b, a % b
    return a
