# signature: float32[2] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def bitwise_into_bins(xa, xo, xx, and_bins, or_bins, xor_bins):
    i = jiasu.grid(1)
    if i < xa.size:
        b = i % and_bins.size
        jiasu.atomic.and_(and_bins, b, xa[i])
        jiasu.atomic.or_(or_bins, b, xo[i])
        jiasu.atomic.xor(xor_bins, b, xx[i])
