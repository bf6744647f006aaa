# signature: float32[1] float32[1] float32[1]
def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]
