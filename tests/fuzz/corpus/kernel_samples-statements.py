# signature: float32[1] float32[1] int64
def statements(x, out, n):
    """A docstring is skipped."""
    i = jiasu.grid(1)
    if i >= out.size:
        return
    acc = 0.0
    for j in range(n):
        if j == 2:
            continue
        elif j > 5:
            break
        else:
            pass
        acc += x[j]  # a trailing comment stays in the line comment
    k = 0
    while k < 3:
        k += 1
    for m in range(10, 0, -2):
        k -= m
    for m in range(2, n):
        k += m
    a, b = 1, 2
    a, b = b, a
    t = (1, 2.5)
    v = x[i] if i > 0 else -x[i]
    out[i] = acc + v + a * b + t[1] + k; out[0] = 1.0
