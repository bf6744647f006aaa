# signature: int64[1] float32[1]
@jiasu.kernel
def cas_single_winner(flag, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.cas(flag, 0, 0, np.int32(i + 1))
