# signature: float32[1] float32[1]
@jiasu.func
def sum_of_squares(x, y):
    return f(x) + f(y)

#---
@jiasu.func
def f(x):
    return x * x
