# signature: float32[2] float32[2]
@jiasu.kernel
def scale2d(a, out):
    i, j = jiasu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2.0 + 1.0
