# signature: float32[1] float32[1]
@jiasu.kernel
def decorated(x, out):
    i = jiasu.grid(1)
    out[i] = x[i] + 1
