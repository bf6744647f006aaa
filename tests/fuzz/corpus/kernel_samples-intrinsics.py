# signature: float32[1]
def intrinsics(out):
    i = jiasu.grid(1)
    r, c = jiasu.grid(2)
    x, y, z = jiasu.grid(3)
    n = jiasu.gridsize(1)
    nr, nc = jiasu.gridsize(2)
    t = jiasu.threadIdx.x + jiasu.threadIdx.y + jiasu.threadIdx.z
    t += jiasu.blockIdx.x + jiasu.blockIdx.y + jiasu.blockIdx.z
    t += jiasu.blockDim.x + jiasu.blockDim.y + jiasu.blockDim.z
    t += jiasu.gridDim.x + jiasu.gridDim.y + jiasu.gridDim.z
    t += jiasu.laneid + jiasu.warpsize
    jiasu.syncthreads()
    count = jiasu.syncthreads_count(t > 0)
    every = jiasu.syncthreads_and(t > 0)
    some = jiasu.syncthreads_or(t > 0)
    jiasu.threadfence()
    jiasu.threadfence_block()
    jiasu.threadfence_system()
    out[i] = i + r + c + x + y + z + n + nr + nc + t + count + int(every) + int(some)
