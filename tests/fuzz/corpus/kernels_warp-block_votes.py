# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def block_votes(x, counts, ands, ors):
    i = jiasu.grid(1)
    pred = x[i] > 0
    c = jiasu.syncthreads_count(pred)
    a = jiasu.syncthreads_and(pred)
    o = jiasu.syncthreads_or(pred)
    if jiasu.threadIdx.x == 0:
        b = jiasu.blockIdx.x
        counts[b] = np.int32(c)
        ands[b] = a
        ors[b] = o
