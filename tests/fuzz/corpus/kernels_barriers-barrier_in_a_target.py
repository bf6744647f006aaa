# signature: float32[2]
@jiasu.kernel
def barrier_in_a_target(out):
    tid = jiasu.threadIdx.x
    out[tid, jiasu.syncthreads_count(tid < 3)] = 1
