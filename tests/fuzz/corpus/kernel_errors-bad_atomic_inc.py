# signature: uint32[1]
def bad_atomic_inc(a):
    jiasu.atomic.inc(a, 0, 1)
