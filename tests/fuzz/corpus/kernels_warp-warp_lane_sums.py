# signature: float32[1] float32[1]
@jiasu.kernel
def warp_lane_sums(x, out):
    i = jiasu.grid(1)
    v = x[i]
    mask = 16
    while mask > 0:
        v += jiasu.shfl_xor_sync(0xFFFFFFFF, v, mask)
        mask //= 2
    out[i] = v
