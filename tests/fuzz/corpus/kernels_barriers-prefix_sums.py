# signature: float32[1] float32[1]
@jiasu.kernel
def prefix_sums(x, out):
    """Hillis-Steele inclusive scan of each block: a while loop around barriers, a uniform stride."""
    buf = jiasu.shared.array(256, np.float64)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    buf[t] = x[i]
    jiasu.syncthreads()
    stride = 1
    while stride < jiasu.blockDim.x:
        add = 0.0
        if t >= stride:
            add = buf[t - stride]
        jiasu.syncthreads()
        buf[t] += add
        jiasu.syncthreads()
        stride *= 2
    out[i] = buf[t]
