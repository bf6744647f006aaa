# signature: float32[1] float32[1]
@jiasu.kernel
def warp_inclusive_scan(x, out):
    i = jiasu.grid(1)
    v = x[i]
    d = 1
    while d < jiasu.warpsize:
        up = jiasu.shfl_up_sync(0xFFFFFFFF, v, d)
        if jiasu.laneid >= d:
            v += up
        d *= 2
    out[i] = v
