# signature: float32[1] int64
@jiasu.kernel
def chained_assignment(out, n):
    u = n
    u = w = u + 1
    out[jiasu.threadIdx.x] = u * 100 + w
