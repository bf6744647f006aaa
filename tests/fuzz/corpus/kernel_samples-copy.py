# signature: float32[1] float32[1]
def copy(x, out):
    i = jiasu.grid(1)
    out[i] = x[i]
