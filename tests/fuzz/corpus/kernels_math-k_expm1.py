# signature: float32[1] float32[1]
@jiasu.kernel
def k_expm1(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.expm1(x[i])
