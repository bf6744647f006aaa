# signature: float32[1] float32[1] int64[1] uint32[1] float32[1] float32[1]
def atomics(f, d, ints, uints, grid2, out):
    i = jiasu.grid(1)
    old = jiasu.atomic.add(f, 0, 1.0)
    old += jiasu.atomic.sub(f, 1, 2.0)
    old += jiasu.atomic.max(d, 0, 3.0)
    old += jiasu.atomic.min(d, 1, -3.0)
    k = jiasu.atomic.and_(ints, 0, 6)
    k += jiasu.atomic.or_(ints, 1, 1)
    k += jiasu.atomic.xor(ints, 2, 3)
    k += jiasu.atomic.exch(ints, 3, 4)
    k += jiasu.atomic.cas(ints, 4, 0, 1)
    u = jiasu.atomic.inc(uints, 0, 10)
    u += jiasu.atomic.dec(uints, 1, 10)
    k += jiasu.atomic.add(grid2, (i, 0), 1)
    out[i] = old + k + u
