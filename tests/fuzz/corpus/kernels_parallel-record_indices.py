# signature: float32[2]
@jiasu.kernel
def record_indices(out):
    gx, gy, gz = jiasu.grid(3)
    nx, ny, nz = jiasu.gridsize(3)
    g = (gz * ny + gy) * nx + gx
    out[g, 0] = jiasu.threadIdx.x
    out[g, 1] = jiasu.threadIdx.y
    out[g, 2] = jiasu.threadIdx.z
    out[g, 3] = jiasu.blockIdx.x
    out[g, 4] = jiasu.blockIdx.y
    out[g, 5] = jiasu.blockIdx.z
    out[g, 6] = jiasu.blockDim.x
    out[g, 7] = jiasu.blockDim.y
    out[g, 8] = jiasu.blockDim.z
    out[g, 9] = jiasu.gridDim.x
    out[g, 10] = jiasu.gridDim.y
    out[g, 11] = jiasu.gridDim.z
    out[g, 12] = nx
    out[g, 13] = ny
    out[g, 14] = nz
