# signature: int64[1] float32[1]
@jiasu.kernel
def k_brev(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = jiasu.brev(x[i])
