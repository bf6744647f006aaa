# signature: float32[1] float32[1] int64
def builtins(a, out, n):
    i = jiasu.grid(1)
    x = a[i]
    lo = min(x, 1.0)
    hi = max(x, 0.0, lo)
    s = abs(x) + abs(-3)
    r = round(x) + round(x, 2)
    m = len(a) + len(a.shape) + a.ndim + a.shape[0] + a.size
    c = int(x) + int(float(n)) + int(bool(x))
    for j in range(n):
        c += j
    out[i] = lo + hi + s + r + m + c + float(c)
