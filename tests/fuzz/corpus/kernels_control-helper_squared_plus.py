# signature: float32[1]
@jiasu.func
def helper_squared_plus(a):
    return f(a, a) + 0.5

#---
@jiasu.func
def f(a, b):
    return a * b + 1
