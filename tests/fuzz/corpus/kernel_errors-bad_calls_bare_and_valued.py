# signature: float32[1]
def bad_calls_bare_and_valued(a):
    a[0] = f(a[1])

#---
@jiasu.func
def f(x):
    if x > 0:
        return
    return x
