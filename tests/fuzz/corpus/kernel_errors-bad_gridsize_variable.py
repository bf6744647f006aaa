# signature: float32[1] float32[1]
def bad_gridsize_variable(a, n):
    i = jiasu.gridsize(n)
