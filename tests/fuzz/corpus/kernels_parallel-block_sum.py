# signature: float32[1] float32[1]
@jiasu.kernel
def block_sum(x, out):
    s = jiasu.shared.array(BLOCK, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    if i < x.size:
        s[t] = x[i]
    else:
        s[t] = 0.0
    jiasu.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        jiasu.syncthreads()
        step //= 2
    if t == 0:
        jiasu.atomic.add(out, 0, float(s[0]))
