# signature: float32[1] float32[1] int64[1] int64
def k(x, out, idx, n):
    if n == 0:
        out[0] = x[0] + x[1] - x[2] * x[3] / x[4] + x[5] - x[6] + x[7] * x[8] * x[9]
    elif n == 1:
        out[0] = -(-(-x[idx[idx[0]]])) ** 2 ** 0.5 if not x[0] > 0 else abs(abs(min(x[0], x[1], x[2])))
    elif n == 2:
        if n > 1:
            while n > 2:
                for q in range(n, 0, -1):
                    out[q] = ((x[q] + 1) * (x[q] - 1)) // 2 % 3
                    if q == 5:
                        break
                n -= 1
    else:
        out[0] = 1 if n < 3 < 4 <= 5 != 6 else 2
