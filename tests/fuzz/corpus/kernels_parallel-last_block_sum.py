# signature: float32[1] float32[1] uint32[1] float32[1]
@jiasu.kernel
def last_block_sum(x, partial, ticket, total):
    s = jiasu.shared.array(BLOCK, np.float64)
    is_last = jiasu.shared.array(1, np.int32)
    t = jiasu.threadIdx.x
    b = jiasu.blockIdx.x
    acc = 0.0
    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):
        acc += x[i]
    s[t] = acc
    jiasu.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        jiasu.syncthreads()
        step //= 2
    if t == 0:
        partial[b] = s[0]
        jiasu.threadfence()
        mine = jiasu.atomic.inc(ticket, 0, np.uint32(jiasu.gridDim.x))
        is_last[0] = 1 if mine == jiasu.gridDim.x - 1 else 0
    jiasu.syncthreads()
    if is_last[0] == 1 and t == 0:
        sum_all = 0.0
        for k in range(jiasu.gridDim.x):
            sum_all += partial[k]
        total[0] = sum_all
        ticket[0] = 0
