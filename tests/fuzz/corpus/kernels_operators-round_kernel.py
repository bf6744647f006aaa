# signature: float32[1] float32[1]
@jiasu.kernel
def round_kernel(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = int(round(x[i]))
