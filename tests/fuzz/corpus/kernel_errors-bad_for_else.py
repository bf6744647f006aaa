# signature: float32[1]
def bad_for_else(a):
    for i in range(3):
        pass
    else:
        pass
