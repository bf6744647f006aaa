# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def lanes(lane_out, warp_out, size_out):
    linear = jiasu.threadIdx.y * jiasu.blockDim.x + jiasu.threadIdx.x
    block = jiasu.blockIdx.y * jiasu.gridDim.x + jiasu.blockIdx.x
    g = block * (jiasu.blockDim.x * jiasu.blockDim.y) + linear
    lane_out[g] = jiasu.laneid
    warp_out[g] = linear // jiasu.warpsize
    size_out[g] = jiasu.warpsize
