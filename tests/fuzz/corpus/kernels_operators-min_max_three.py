# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def min_max_three(x, y, z, lo, hi):
    i = jiasu.grid(1)
    if i < x.size:
        lo[i] = min(x[i], y[i], z[i])
        hi[i] = max(x[i], y[i], z[i])
