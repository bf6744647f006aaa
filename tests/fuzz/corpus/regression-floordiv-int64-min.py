# signature: float32[1]
def k(out):
    s = jiasu.shared.array((-9223372036854775807 - 1) // -1, np.float32)
