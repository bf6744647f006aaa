# signature: float32[1] float32[1]
@jiasu.func
def dev_with_default(x, y=2):
    return x
