# signature: float32[1] float32[1] float32[1]
def float_operators(a, b, out):
    i = jiasu.grid(1)
    x = a[i]
    y = b[i]
    r = x + y - x * y / (y + 1.0)
    r += x // y + x % y + x ** 2.0
    r -= -x
    r *= 1.5
    r /= 2.0
    r //= 1.0
    r %= 7.0
    r **= 1.0
    c = x <= y or x >= y and x != y
    out[i] = r if c else y
