# signature: float32[1] float32[1] float32[1] float32[1] int64[1]
@jiasu.kernel
def warp_broadcast_and_reverse(x, from_lane0, reversed_, from_src, src_lane):
    i = jiasu.grid(1)
    lane = jiasu.laneid
    from_lane0[i] = jiasu.shfl_sync(0xFFFFFFFF, x[i], 0)
    reversed_[i] = jiasu.shfl_sync(FULL, x[i], 31 - lane)
    from_src[i] = jiasu.shfl_sync(FULL, x[i], src_lane[i])
