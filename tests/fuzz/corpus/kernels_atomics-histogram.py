# signature: int64[1] float32[1]
@jiasu.kernel
def histogram(x, bins):
    start = jiasu.grid(1)
    stride = jiasu.gridsize(1)
    for i in range(start, x.size, stride):
        jiasu.atomic.add(bins, x[i], 1)
