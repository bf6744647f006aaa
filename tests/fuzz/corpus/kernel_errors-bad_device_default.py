# signature: float32[1]
def bad_device_default(a):
    a[0] = f(a[1])

#---
@jiasu.func
def f(x, y=2):
    return x
