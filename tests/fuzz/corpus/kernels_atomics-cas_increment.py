# signature: int64[1] int64[1]
@jiasu.kernel
def cas_increment(counters, per_thread):
    i = jiasu.grid(1)
    if i < per_thread.size:
        slot = i % counters.size
        old = counters[slot]
        while True:
            seen = jiasu.atomic.cas(counters, slot, old, old + per_thread[i])
            if seen == old:
                break
            old = seen
