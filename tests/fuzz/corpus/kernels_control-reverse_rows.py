# signature: float32[3] float32[1] float32[1]
@jiasu.kernel
def reverse_rows(a, out, first_visited):
    i = jiasu.grid(1)
    if i < a.shape[0]:
        m = a.shape[1]
        j = 0
        for k in range(m - 1, -1, -1):
            if j == 0:
                first_visited[i] = k
            out[i, j] = a[i, k]
            j += 1
        for k in range(m):
            pass
