# signature: float32[1] float32[1]
@jiasu.kernel
def k_constants(out, out32):
    if jiasu.grid(1) == 0:
        out[0] = math.pi
        out[1] = math.e
        out[2] = math.inf
        out[3] = -math.inf
        out[4] = math.nan
        out[5] = math.cos(math.pi)
        out32[0] = math.pi
        out32[1] = math.e
