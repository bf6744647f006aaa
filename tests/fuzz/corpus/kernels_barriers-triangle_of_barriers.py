# signature: float32[1] int64
@jiasu.kernel
def triangle_of_barriers(out, n):
    """A block-level loop whose variable bounds an inner block-level loop: both uniform."""
    buf = jiasu.shared.array(32, np.int64)
    t = jiasu.threadIdx.x
    total = 0
    for a in range(n):
        for b in range(a):
            buf[t] = a * 10 + b
            jiasu.syncthreads()
            total += buf[(t + 1) % 32]
            jiasu.syncthreads()
    out[t] = total * 1000 + a
