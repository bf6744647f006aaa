# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def k_fma(a, b, c, out):
    i = jiasu.grid(1)
    if i < a.size:
        out[i] = jiasu.fma(a[i], b[i], c[i])
