# signature: float32[1] float32[1]
@jiasu.kernel
def shift_down_within_warp(x, out):
    i = jiasu.grid(1)
    v = jiasu.shfl_down_sync(0xFFFFFFFF, x[i], 3)
    if jiasu.laneid < 29:
        out[i] = v
    else:
        out[i] = -x[i]
