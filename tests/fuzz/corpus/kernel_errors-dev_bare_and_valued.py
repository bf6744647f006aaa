# signature: int64
@jiasu.func
def dev_bare_and_valued(x):
    if x > 0:
        return
    return x
