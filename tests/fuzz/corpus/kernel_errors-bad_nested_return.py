# signature: float32[1]
def bad_nested_return(a):
    for i in range(3):
        if i > 1:
            return i
