# signature: int64[1] float32[1]
@jiasu.kernel
def warp_neighbour_exchange(x, out):
    buf = jiasu.shared.array(128, np.int32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    lane = jiasu.laneid
    buf[t] = x[i]
    jiasu.syncwarp()
    out[i] = buf[(t // 32) * 32 + (lane + 1) % 32]
