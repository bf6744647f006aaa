# signature: int64 int64
@jiasu.func
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a
