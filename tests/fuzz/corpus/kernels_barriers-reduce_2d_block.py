# signature: float32[1] float32[1]
@jiasu.kernel
def reduce_2d_block(x, out):
    """A 2-D block (16 x 8) reducing in shared memory: threads numbered x fastest."""
    buf = jiasu.shared.array(128, np.float64)
    tid = jiasu.threadIdx.y * jiasu.blockDim.x + jiasu.threadIdx.x
    buf[tid] = x[jiasu.blockIdx.x * 128 + tid]
    jiasu.syncthreads()
    s = 64
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        jiasu.syncthreads()
        s //= 2
    if tid == 0:
        out[jiasu.blockIdx.x] = buf[0]
