# signature: float32[1] float32[1]
@jiasu.kernel
def block_reverse_dynamic(x, out):
    buf = jiasu.shared.array(0, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    buf[t] = x[i]
    jiasu.syncthreads()
    out[i] = buf[jiasu.blockDim.x - 1 - t]
