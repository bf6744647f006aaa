# signature: int64[1] int64
@jiasu.kernel(debug=True)
def k(out, n):  # a comment
    """docstring"""
    a = 0x_FF + 0o17 + 0b1_01 + 1_000 + \
        9223372036854775807
    b = (1.5e-3 + .5 + 2. + 1e308 * 10
         + 0.0)
    ñame = 1; out[0] = a + int(b) + ñame
	# a tab before a comment
