# signature: float32[1]
@jiasu.func
def f(x):
    return f(x)

#---
@jiasu.func
def f(x):
    return f(x)
