# signature: float32[2] float32[2] float32[2] float32[2] float32[2] float32[2]
@jiasu.kernel
def unpack(m, x, y, swapped_x, swapped_y, corner):
    i, j = jiasu.grid(2)
    rows, cols = m.shape
    if i < rows and j < cols:
        a, b = x[i, j], y[i, j]
        a, b = b, a
        swapped_x[i, j] = a
        swapped_y[i, j] = b
        corner[i, j] = m[rows - 1 - i, cols - 1 - j]
