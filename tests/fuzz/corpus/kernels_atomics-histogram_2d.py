# signature: float32[2] float32[1] float32[1]
@jiasu.kernel
def histogram_2d(rows, cols, bins):
    i = jiasu.grid(1)
    if i < rows.size:
        jiasu.atomic.add(bins, (rows[i], cols[i]), 1)
