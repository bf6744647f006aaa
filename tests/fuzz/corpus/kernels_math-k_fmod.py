# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def k_fmod(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.fmod(y[i], x[i])
