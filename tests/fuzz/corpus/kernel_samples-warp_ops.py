# signature: float32[1] float32[1]
def warp_ops(x, out):
    i = jiasu.grid(1)
    v = x[i]
    jiasu.syncwarp()
    jiasu.syncwarp(0xFFFFFFFF)
    v += jiasu.shfl_sync(0xFFFFFFFF, v, 0)
    v += jiasu.shfl_up_sync(0xFFFFFFFF, v, 1)
    v += jiasu.shfl_down_sync(0xFFFFFFFF, v, 1)
    v += jiasu.shfl_xor_sync(0xFFFFFFFF, v, 16)
    mask = jiasu.ballot_sync(0xFFFFFFFF, v > 0)
    some = jiasu.any_sync(0xFFFFFFFF, v > 0)
    every = jiasu.all_sync(0xFFFFFFFF, v > 0)
    active = jiasu.activemask()
    out[i] = v + mask + int(some) + int(every) + active
