# signature: float32[1] float32[1] float32[1] float32[1]
def device_calls(a, b, out32, out64):
    i = jiasu.grid(1)
    out32[i] = f(a[i], a[i])
    out64[i] = f(b[i], b[i])
    g(out32, 0, clamp(a[i], np.float32(0), np.float32(1)))
    out64[0] = square(b[i]) + clamp(x=b[i], lo=0.0, hi=1.0)

#---
@jiasu.func
def f(x, y):
    return square(x) + square(y)

#---
@jiasu.func
def g(arr, i, v):
    arr[i] = v
