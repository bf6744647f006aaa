# signature: int64
@jiasu.func
def sign(v):
    if v > 0:
        return 1
    elif v < 0:
        return -1
    return 0
