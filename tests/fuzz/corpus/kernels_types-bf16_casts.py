# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def bf16_casts(h, f, h_from_f, f_from_h, mixed):
    i = jiasu.grid(1)
    if i < f.size:
        h_from_f[i] = jiasu.bfloat16(f[i])
        f_from_h[i] = jiasu.float32(h[i])
        mixed[i] = h[i] + f[i]
