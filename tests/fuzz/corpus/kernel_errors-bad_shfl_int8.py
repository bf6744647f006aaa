# signature: float32[1]
def bad_shfl_int8(a):
    x = jiasu.shfl_sync(0xFFFFFFFF, a[0], 0)
