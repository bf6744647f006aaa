# signature: float32[1]
def bad_local_dynamic(a):
    s = jiasu.local.array(0, np.float32)
