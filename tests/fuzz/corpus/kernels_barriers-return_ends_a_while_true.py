# signature: float32[1] int64
@jiasu.kernel
def return_ends_a_while_true(out, n):
    while True:
        out[jiasu.threadIdx.x] += 1
        if out[jiasu.threadIdx.x] >= n:
            return
        jiasu.syncthreads()
