# signature: float32[1] int64[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def casts(xf, xi, f32, i64, f64, i32, b, u8):
    i = jiasu.grid(1)
    if i < xf.size:
        f32[i] = jiasu.float32(xf[i])
        i64[i] = int(xf[i])
        f64[i] = float(xi[i])
        i32[i] = np.int32(xf[i])
        b[i] = bool(xi[i])
        u8[i] = np.uint8(xi[i] & 255)
