# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def f16_casts(h, f, h_from_f, f_from_h, mixed):
    i = jiasu.grid(1)
    if i < f.size:
        h_from_f[i] = np.float16(f[i])
        f_from_h[i] = np.float32(h[i])
        mixed[i] = h[i] + f[i]
