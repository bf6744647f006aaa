# signature: float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def k_predicates(x, isnan_, isinf_, isfinite_):
    i = jiasu.grid(1)
    if i < x.size:
        isnan_[i] = math.isnan(x[i])
        isinf_[i] = math.isinf(x[i])
        isfinite_[i] = math.isfinite(x[i])
