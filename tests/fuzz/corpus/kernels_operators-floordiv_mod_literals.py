# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def floordiv_mod_literals(a, q, r, q2, r2):
    i = jiasu.grid(1)
    if i < a.size:
        q[i] = a[i] // 4
        r[i] = a[i] % -3
        q2[i] = -17 // a[i]
        r2[i] = 17 % a[i]
