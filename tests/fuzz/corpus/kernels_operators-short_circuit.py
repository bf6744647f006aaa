# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def short_circuit(flag, and_count, or_count, not_count, both):
    i = jiasu.grid(1)
    if i < flag.size:
        if flag[i] > 0 and jiasu.atomic.add(and_count, 0, 1) >= 0:
            both[i] = 1
        else:
            both[i] = 0
        if flag[i] > 0 or jiasu.atomic.add(or_count, 0, 1) < 0:
            both[i] += 2
        if not (flag[i] > 0) and not jiasu.atomic.add(not_count, 0, 1) < 0:
            both[i] += 4
