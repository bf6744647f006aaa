# signature: float32[1] float32[1] float32[1]
def int_operators(a, b, out):
    i = jiasu.grid(1)
    x = a[i]
    y = b[i]
    r = x + y - x * y
    r += x // y + x % y + x ** 2
    r ^= (x & y) | (x ^ y) | (x << 2) | (y >> 1) | ~x
    r -= -x + +y
    r *= 3
    r //= 2
    r %= 1000
    r **= 1
    r <<= 1
    r >>= 1
    r &= 0xFFFF
    r |= 1
    q = x / y
    c = 0 <= x < y != 7
    d = (x > 0 and y > 0) or not (x == y)
    out[i] = r + int(q) + int(c) + int(d)
