# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def exchange_float(values, slot, olds):
    i = jiasu.grid(1)
    if i < values.size:
        olds[i] = jiasu.atomic.exch(slot, 0, values[i])
