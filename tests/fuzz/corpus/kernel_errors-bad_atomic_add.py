# signature: float32[1]
def bad_atomic_add(a):
    jiasu.atomic.add(a, 0, 1)
