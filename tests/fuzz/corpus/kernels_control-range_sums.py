# signature: int64[1] int64[1] int64[1] float32[1] float32[1]
@jiasu.kernel
def range_sums(start, stop, step, total, count):
    i = jiasu.grid(1)
    if i < start.size:
        t = 0
        c = 0
        for v in range(start[i], stop[i], step[i]):
            t += v
            c += 1
        total[i] = t
        count[i] = c
