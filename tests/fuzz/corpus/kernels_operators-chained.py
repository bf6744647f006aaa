# signature: float32[2] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def chained(x, lo, hi, inside, order_ok, counter, neg_count, neg_hit):
    i = jiasu.grid(1)
    if i < x.size:
        inside[i] = lo < x[i] <= hi
        # The middle operand is evaluated once: counter ends at exactly x.size.
        order_ok[i] = 0 <= jiasu.atomic.add(counter, 0, 1) < x.size
        # a < b < c stops at the first false comparison: neg_count only counts negative x.
        neg_hit[i] = x[i] < 0.0 < jiasu.atomic.add(neg_count, 0, 1) + 1
