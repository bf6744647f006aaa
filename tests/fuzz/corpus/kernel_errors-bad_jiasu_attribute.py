# signature: float32[1]
def bad_jiasu_attribute(a):
    a[0] = jiasu.nosuch
