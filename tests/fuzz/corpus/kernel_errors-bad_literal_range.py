# signature: float32[1]
def bad_literal_range(a):
    a[0] = a[1] + 300
