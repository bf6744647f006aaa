# signature: float32[1] int64 float32[1]
@jiasu.kernel
def times_scalar(x, s, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] * s
