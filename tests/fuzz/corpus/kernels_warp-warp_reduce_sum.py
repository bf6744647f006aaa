# signature: float32[1] float32[1]
@jiasu.kernel
def warp_reduce_sum(x, out):
    i = jiasu.grid(1)
    v = np.float32(0.0)
    if i < x.size:
        v = x[i]
    offset = 16
    while offset > 0:
        v += jiasu.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if jiasu.laneid == 0:
        jiasu.atomic.add(out, 0, v)
