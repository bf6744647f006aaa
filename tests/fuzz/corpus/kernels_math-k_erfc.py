# signature: float32[1] float32[1]
@jiasu.kernel
def k_erfc(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.erfc(x[i])
