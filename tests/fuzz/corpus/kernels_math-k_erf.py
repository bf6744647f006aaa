# signature: float32[1] float32[1]
@jiasu.kernel
def k_erf(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.erf(x[i])
