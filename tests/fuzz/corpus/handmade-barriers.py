# signature: float32[1] float32[1] int64
def k(x, out, rounds):
    buf = jiasu.shared.array(64, np.float32)
    t = jiasu.threadIdx.x
    s = 32
    v = x[t]
    for r in range(rounds):
        buf[t] = v
        jiasu.syncthreads()
        if rounds > 2:
            v = buf[(t + 1) % 64]
        elif rounds > 1:
            v = buf[(t + 2) % 64]
        else:
            return
        jiasu.syncthreads()
    while s > 0:
        s //= 2
        jiasu.syncthreads()
    out[t] = v + jiasu.shfl_sync(FULL, v, 0)
