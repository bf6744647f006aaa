# signature: float32[1] int64[1]
@jiasu.kernel(debug=True)
def count_into(bins, keys):
    i = jiasu.grid(1)
    if i < keys.size:
        jiasu.atomic.add(bins, keys[i], 1)
