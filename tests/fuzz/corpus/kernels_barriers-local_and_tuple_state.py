# signature: int64[1] float32[1]
@jiasu.kernel
def local_and_tuple_state(x, out):
    """A local array and a tuple variable kept by each thread across barriers."""
    mine = jiasu.local.array(4, np.int32)
    buf = jiasu.shared.array(32, np.int32)
    t = jiasu.threadIdx.x
    pair = (t, 2 * t)
    for k in range(4):
        buf[t] = x[jiasu.blockIdx.x * 32 + (t + k) % 32]
        jiasu.syncthreads()
        mine[k] = buf[(t + 1) % 32]
        jiasu.syncthreads()
    a, b = pair
    out[jiasu.blockIdx.x * 32 + t] = mine[0] + mine[1] + mine[2] + mine[3] + a - b // 2
