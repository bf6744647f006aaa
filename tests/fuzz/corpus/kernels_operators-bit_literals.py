# signature: int64[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def bit_literals(a, lo_byte, shifted, flipped):
    i = jiasu.grid(1)
    if i < a.size:
        lo_byte[i] = (a[i] >> 3) & 0xFF
        shifted[i] = (a[i] << 2) | 1
        flipped[i] = a[i] ^ 0x5A5A
