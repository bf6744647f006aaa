# signature: float32[1] float32[1]
@jiasu.kernel
def grid_stride_through_shared(x, out):
    """A grid-stride loop around barriers: each thread's own bounds (the same trip count everywhere, as CUDA
    requires around a barrier, but a different index in every thread)."""
    buf = jiasu.shared.array(64, np.float32)
    t = jiasu.threadIdx.x
    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):
        buf[t] = x[i] * 2
        jiasu.syncthreads()
        out[i] = buf[63 - t]
        jiasu.syncthreads()
