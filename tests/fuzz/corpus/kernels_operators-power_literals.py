# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def power_literals(x, sq, root, inv, cube):
    i = jiasu.grid(1)
    if i < x.size:
        sq[i] = x[i] ** 2
        root[i] = x[i] ** 0.5
        inv[i] = x[i] ** -1
        cube[i] = 2 ** x[i]
