# signature: float32[3] float32[3]
@jiasu.kernel
def index3d(a, out):
    i, j, k = jiasu.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] * 2.0 - a[i, j, 0]
