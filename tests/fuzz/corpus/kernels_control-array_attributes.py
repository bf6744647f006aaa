# signature: float32[3] float32[1] float32[1]
@jiasu.kernel
def array_attributes(a, v, out):
    if jiasu.grid(1) == 0:
        out[0] = len(a)
        out[1] = a.shape[0]
        out[2] = a.shape[1]
        out[3] = a.shape[2]
        out[4] = a.ndim
        out[5] = a.size
        out[6] = len(v)
        out[7] = v.ndim
        out[8] = v.shape[0]
