# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def k_rounding(x, fl, ce, tr):
    i = jiasu.grid(1)
    if i < x.size:
        fl[i] = math.floor(x[i])
        ce[i] = math.ceil(x[i])
        tr[i] = math.trunc(x[i])
