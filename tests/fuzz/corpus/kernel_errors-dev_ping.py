# signature: float32[1]
@jiasu.func
def g(x):
    return f(x)

#---
@jiasu.func
def f(x):
    return g(x - 1)

#---
@jiasu.func
def g(x):
    return f(x)
