# signature: float32[1]
def bad_self_recursion(a):
    a[0] = f(a[1])

#---
@jiasu.func
def f(x):
    return f(x)
