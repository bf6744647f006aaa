# signature: float32[1] float32[2] float32[1]
@jiasu.kernel
def negative_indices(x, m, out):
    i = jiasu.grid(1)
    n = x.size
    if i < n:
        out[i] = x[-(i + 1)]
    if i == 0:
        out[n] = x[-1]
        out[n + 1] = x[-n]
        out[n + 2] = m[-1, -2]
        out[n + 3] = m[1, -1]
        out[n + 4] = m[-m.shape[0], -m.shape[1]]
