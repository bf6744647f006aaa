# signature: float32[1]
@jiasu.func
def dev_arity(x):
    return x
