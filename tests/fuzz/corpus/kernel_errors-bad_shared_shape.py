# signature: float32[1] float32[1]
def bad_shared_shape(a, n):
    s = jiasu.shared.array(n, np.float32)
