# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def grid_stride_1d(x, out, visits):
    start = jiasu.grid(1)
    stride = jiasu.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * 2.0 + 1.0
        visits[i] += 1
