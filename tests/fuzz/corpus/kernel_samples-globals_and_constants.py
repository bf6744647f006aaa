# signature: float32[1] float32[1]
def globals_and_constants(a, out):
    i = jiasu.grid(1)
    s = jiasu.shared.array(SIZES[0] * N, REAL)
    s[0] = a[i] * SCALE
    out[i] = s[0] + N + SIZES[1] + len(SIZES)
