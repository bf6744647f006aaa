# signature: float32[1]
def bad_calls_missing_return(a):
    a[0] = f(a[1])

#---
@jiasu.func
def f(x):
    if x > 0:
        return x
