# signature: int64
@jiasu.func
def dev_missing_return(x):
    if x > 0:
        return x
