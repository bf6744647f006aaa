# signature: int64[1] float32[1] int64
@jiasu.kernel
def rotate_in_block(x, out, rounds):
    """Each round every thread passes its value to the next thread of the block, through shared memory."""
    buf = jiasu.shared.array(128, np.int64)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    v = x[i]
    for r in range(rounds):
        buf[t] = v
        jiasu.syncthreads()
        v = buf[(t + 127) % 128]
        jiasu.syncthreads()
    out[i] = v
