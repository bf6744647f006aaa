# signature: float32[1] float32[1]
@jiasu.kernel
def fences(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] + 1.0
        jiasu.threadfence_block()
        jiasu.threadfence_system()
        jiasu.threadfence()
        out[i] = out[i] * 2.0
