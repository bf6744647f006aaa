# signature: int64[1]
def bad_range_float(a):
    for i in range(a[0]):
        pass
