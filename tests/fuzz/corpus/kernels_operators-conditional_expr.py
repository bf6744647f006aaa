# signature: float32[1] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def conditional_expr(x, y, picked, bucket, taken, counter):
    i = jiasu.grid(1)
    if i < x.size:
        picked[i] = x[i] if x[i] > y[i] else y[i] * 2.0
        v = x[i]
        if v < -1.0:
            bucket[i] = 0
        elif v < 0.0:
            bucket[i] = 1
        elif v < 1.0:
            bucket[i] = 2
        else:
            bucket[i] = 3
        # Only the chosen branch of a conditional expression is evaluated.
        taken[i] = jiasu.atomic.add(counter, 0, 1) if x[i] > 0 else -1
