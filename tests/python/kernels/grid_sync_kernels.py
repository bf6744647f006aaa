"""The grid-sync kernel that test_kernels_grid_sync.py (both backends) and gpu/test_grid_sync_gpu.py (full
cooperative grids on a GPU) launch, with its NumPy reference."""
import numpy as np

from jiasu import cuda


@cuda.jit
def reverse_rounds(a, out, rounds):
    """Each round every thread writes its value, the grid syncs, and it takes the value of the opposite thread
    (of another block) plus one; a second sync keeps the next round's writes after every read."""
    i = cuda.grid(1)
    n = a.size
    g = cuda.cg.this_grid()
    v = i
    for r in range(rounds):
        a[i] = v
        g.sync()
        v = a[n - 1 - i] + 1
        g.sync()
    out[i] = v


def reversed_rounds(n, rounds):
    """What reverse_rounds leaves in out for a grid of n threads."""
    ref = np.arange(n)
    for _ in range(rounds):
        ref = ref[::-1] + 1
    return ref
