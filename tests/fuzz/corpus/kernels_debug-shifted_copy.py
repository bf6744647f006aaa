# signature: float32[1] float32[1] int64
@jiasu.kernel(debug=True)
def shifted_copy(x, out, shift):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i + shift]
