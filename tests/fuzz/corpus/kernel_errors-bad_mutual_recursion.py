# signature: float32[1]
def bad_mutual_recursion(a):
    a[0] = f(a[1])

#---
@jiasu.func
def f(x):
    return g(x)

#---
@jiasu.func
def g(x):
    return f(x - 1)
