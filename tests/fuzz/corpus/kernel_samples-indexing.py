# signature: float32[3] float32[3]
def indexing(cube, out):
    i, j, k = jiasu.grid(3)
    if i < cube.shape[0] and j < cube.shape[1] and k < cube.shape[2]:
        out[i, j, k] = cube[i, j, k] + cube[-1, -1, -1]
