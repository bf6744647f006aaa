# signature: float32[2] float32[2]
@jiasu.kernel(debug=True)
def transpose(a, out):
    i, j = jiasu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[j, i]
