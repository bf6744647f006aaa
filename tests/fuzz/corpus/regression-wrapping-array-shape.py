# signature: float32[1]
def k(out):
    s = jiasu.local.array(BIG * 3, np.float32)
