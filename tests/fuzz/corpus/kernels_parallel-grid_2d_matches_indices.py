# signature: float32[2]
@jiasu.kernel
def grid_2d_matches_indices(out):
    i, j = jiasu.grid(2)
    gx = jiasu.blockIdx.x * jiasu.blockDim.x + jiasu.threadIdx.x
    gy = jiasu.blockIdx.y * jiasu.blockDim.y + jiasu.threadIdx.y
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = gx * 100000 + gy
        if gx != i or gy != j:
            out[i, j] = -1
