# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def k_atan2(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.atan2(y[i], x[i])
