# signature: uint32[1] int64 float32[1]
@jiasu.kernel
def decrement_wrapping(counter, limit, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.dec(counter, 0, limit)
