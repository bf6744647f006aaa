# signature: float32[2] float32[2]
def shared_and_local(a, out):
    tile = jiasu.shared.array((16, 16), np.float32)
    row = jiasu.local.array(4, np.int32)
    cube = jiasu.local.array(shape=(2, 2, 2), dtype=np.float64)
    tx = jiasu.threadIdx.x
    ty = jiasu.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    for k in range(4):
        row[k] = k
    cube[1, 1, 1] = 2.0
    jiasu.syncthreads()
    out[ty, tx] = tile[tx, ty] + row[3] + cube[1, 1, 1] + tile.shape[0] + len(row)
