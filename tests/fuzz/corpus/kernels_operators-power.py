# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def power(a, b, out):
    i = jiasu.grid(1)
    if i < a.size:
        out[i] = a[i] ** b[i]
