# signature: float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def min_max_abs(x, y, p, q, fmin, fmax, fabs_, imin, imax, iabs, relu, clamp):
    i = jiasu.grid(1)
    if i < x.size:
        fmin[i] = min(x[i], y[i])
        fmax[i] = max(x[i], y[i])
        fabs_[i] = abs(x[i])
        imin[i] = min(p[i], q[i])
        imax[i] = max(p[i], q[i])
        iabs[i] = abs(p[i])
        relu[i] = max(p[i], 0)
        clamp[i] = min(max(x[i], -0.5), 0.5)
