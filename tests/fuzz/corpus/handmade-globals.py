# signature: float64[1] int64 float32[2A]
@jiasu.kernel
def k(out, n, m):
    i, j = jiasu.grid(2)
    t = T
    a, b = SIZES
    if i < m.shape[0] and j < m.shape[1]:
        out[i] = t[0][1] + T[1] + a * b + N + SCALE + REAL(m[i, j]) + BIG // (n + 1) + FLAG
