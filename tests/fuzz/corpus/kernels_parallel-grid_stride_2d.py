# signature: float32[3] float32[1]
@jiasu.kernel
def grid_stride_2d(a, out):
    x0, y0 = jiasu.grid(2)
    sx, sy = jiasu.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            out[i, j] = a[i, j] - 0.5 * a[i, 0]
