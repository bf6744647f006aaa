# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def floordiv_mod(a, b, q, r):
    i = jiasu.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
