# signature: float32[1] float32[1]
def casts(a, out):
    i = jiasu.grid(1)
    x = a[i]
    h = jiasu.float16(x)
    g = jiasu.bfloat16(x)
    f = np.float32(x) + jiasu.float32(h) + np.float32(g)
    k = np.int32(x) + jiasu.uint8(x) + np.int64(f)
    out[i] = np.float64(f) + k + REAL(1)
