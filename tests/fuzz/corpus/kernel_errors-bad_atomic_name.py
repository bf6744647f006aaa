# signature: float32[1]
def bad_atomic_name(a):
    jiasu.atomic.mul(a, 0, 1)
