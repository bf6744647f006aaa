# signature: float32[1]
@jiasu.func
def square(x):
    return x * x
