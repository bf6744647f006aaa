# signature: float32[1] float32[1] float32[1] float32[1]
def half_math(h, b, out_h, out_b):
    i = jiasu.grid(1)
    out_h[i] = h[i] * 2.0 + math.sqrt(h[i]) - h[i] / 3
    out_b[i] = b[i] * 2.0 + math.exp(b[i]) + 1
