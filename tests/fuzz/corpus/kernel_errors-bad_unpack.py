# signature: float32[1]
def bad_unpack(a):
    i, j = jiasu.grid(3)
