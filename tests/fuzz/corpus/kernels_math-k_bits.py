# signature: int64[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def k_bits(x, popc, clz, ffs):
    i = jiasu.grid(1)
    if i < x.size:
        popc[i] = np.int32(jiasu.popc(x[i]))
        clz[i] = np.int32(jiasu.clz(x[i]))
        ffs[i] = np.int32(jiasu.ffs(x[i]))
