# signature: float32[3] float32[1]
@jiasu.kernel
def cas_2d(grid_, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        r = i % grid_.shape[0]
        c = (i // grid_.shape[0]) % grid_.shape[1]
        olds[i] = jiasu.atomic.cas(grid_, (r, c), -1, np.int32(i))
