# signature: float32[1] float32[1]
@jiasu.kernel
def double_plus_one(x, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = 2.0 * x[i] + 1.0
