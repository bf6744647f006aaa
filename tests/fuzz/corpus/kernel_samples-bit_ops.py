# signature: int64[1] float32[1] float32[1]
def bit_ops(a, f, out):
    i = jiasu.grid(1)
    x = a[i]
    n = jiasu.popc(x) + jiasu.clz(x) + jiasu.ffs(x)
    r = jiasu.brev(x)
    g = jiasu.fma(f[i], f[i], 1.0)
    out[i] = n + r + np.uint32(g)
