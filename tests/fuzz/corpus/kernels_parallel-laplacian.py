# signature: float32[3] float32[1]
@jiasu.kernel
def laplacian(u, out):
    i, j = jiasu.grid(2)
    if 1 <= i < u.shape[0] - 1 and 1 <= j < u.shape[1] - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
