# signature: float32[1] float32[1]
@jiasu.kernel
def early_return(x, out):
    i = jiasu.grid(1)
    if i >= x.size:
        return
    if x[i] < 0:
        out[i] = -1.0
        return
    out[i] = math.sqrt(x[i])
