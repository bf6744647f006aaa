# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def horner(x, coeffs, out):
    i = jiasu.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(coeffs.size - 1, -1, -1):
            acc = acc * x[i] + coeffs[k]
        out[i] = acc
