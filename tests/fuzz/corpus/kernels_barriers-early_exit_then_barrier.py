# signature: float32[1] float32[1] int64
@jiasu.kernel
def early_exit_then_barrier(x, out, n):
    """Threads past n return before the barrier; the others still meet there (exited threads count as
    arrived on sm_70+), and a branch that every thread takes holds a barrier too."""
    buf = jiasu.shared.array(64, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    if i >= n:
        return
    buf[t] = x[i] * 2
    jiasu.syncthreads()
    if n > 0:
        jiasu.syncthreads()
        partner = t ^ 1
        if jiasu.blockIdx.x * 64 + partner < n:
            out[i] = buf[partner]
        else:
            out[i] = -1.0
