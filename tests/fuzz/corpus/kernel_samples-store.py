# signature: float32[1] float32[1] float32[1]
@jiasu.func
def store(arr, i, v):
    arr[i] = v
