# signature: int64[1] float32[1] float32[1]
@jiasu.kernel(debug=True)
def scatter(index, values, out):
    i = jiasu.grid(1)
    if i < values.size:
        out[index[i]] = values[i]
