# signature: float32[2] float32[2]
@jiasu.kernel
def sort_rows(a, out):
    r = jiasu.grid(1)
    if r < a.shape[0]:
        tmp = jiasu.local.array(K, np.float32)
        for k in range(K):
            tmp[k] = a[r, k]
        for k in range(1, K):
            v = tmp[k]
            j = k - 1
            while j >= 0 and tmp[j] > v:
                tmp[j + 1] = tmp[j]
                j -= 1
            tmp[j + 1] = v
        for k in range(K):
            out[r, k] = tmp[k]
