# signature: float32[1] int64 float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def bit_ops(a, b, s, o_and, o_or, o_xor, o_inv, o_shl, o_shr):
    i = jiasu.grid(1)
    if i < a.size:
        o_and[i] = a[i] & b[i]
        o_or[i] = a[i] | b[i]
        o_xor[i] = a[i] ^ b[i]
        o_inv[i] = ~a[i]
        o_shl[i] = a[i] << s[i]
        o_shr[i] = a[i] >> s[i]
