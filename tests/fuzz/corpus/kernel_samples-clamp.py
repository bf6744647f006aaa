# signature: float32[1] float32[1] float32[1]
@jiasu.func
def clamp(x, lo, hi):
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x
