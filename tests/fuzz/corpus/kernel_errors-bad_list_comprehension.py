# signature: float32[1]
def bad_list_comprehension(a):
    b = [v for v in range(3)]
