# signature: float32[2] float32[2] float32[2]
@jiasu.kernel
def matmul_tiled(A, B, C):
    sA = jiasu.shared.array((TILE, TILE), np.float32)
    sB = jiasu.shared.array((TILE, TILE), np.float32)
    tx = jiasu.threadIdx.x
    ty = jiasu.threadIdx.y
    row = jiasu.blockIdx.y * TILE + ty
    col = jiasu.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        k = t * TILE + tx
        if row < A.shape[0] and k < A.shape[1]:
            sA[ty, tx] = A[row, k]
        else:
            sA[ty, tx] = 0.0
        k = t * TILE + ty
        if k < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[k, col]
        else:
            sB[ty, tx] = 0.0
        jiasu.syncthreads()
        for kk in range(TILE):
            acc += sA[ty, kk] * sB[kk, tx]
        jiasu.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
