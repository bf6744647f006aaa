# signature: float32[1]
def bad_generator(a):
    b = sum(v for v in range(3))
