# signature: float32[1] float32[1]
def dynamic_shared(a, out):
    buffer = jiasu.shared.array(0, np.float32)
    i = jiasu.threadIdx.x
    buffer[i] = a[i]
    jiasu.syncthreads()
    out[i] = buffer[jiasu.blockDim.x - 1 - i]
