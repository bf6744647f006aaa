"""k.analyze(blocks, threads, *args): memory-access analysis on the CPU backend, checked against counts computed
here with NumPy from each kernel's known index pattern (32-byte sectors of global memory per warp request, the
bank conflicts of shared memory: 32 banks of 4 bytes). Runs on every machine."""
import inspect

import numpy as np
import pytest

import jiasu
from jiasu import cuda


def global_cost(byte_addresses, itemsize):
    """(sectors, ideal sectors) of one warp request whose lanes read `itemsize` bytes at each address."""
    touched = np.unique(np.concatenate([np.arange(a, a + itemsize) for a in byte_addresses]))
    return len(np.unique(touched // 32)), -(-len(touched) // 32)


def warp_requests(indices, itemsize):
    """Per warp of the index list (one per linear thread, in order): its request's (sectors, ideal)."""
    indices = np.asarray(indices)
    return [global_cost(indices[w:w + 32] * itemsize, itemsize) for w in range(0, len(indices), 32)]


def bank_ways(word_addresses):
    """Wavefronts of a shared-memory request of 4-byte words: the most distinct words one bank holds."""
    words = np.unique(np.asarray(word_addresses))
    return int(np.bincount(words % 32, minlength=32).max())


def row_of(report, array, access):
    rows = [r for r in report.rows if r["array"] == array and r["access"] == access]
    assert len(rows) == 1, report.rows
    return rows[0]


def line_of(kernel, text):
    """The file line of `text` in kernel's source."""
    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(i for i, line in enumerate(lines) if text in line)


@jiasu.kernel
def copy(x, out):
    i = jiasu.grid(1)
    out[i] = x[i]


@jiasu.kernel
def gather_strided(x, out):
    i = jiasu.grid(1)
    out[i] = x[i * 32]


def test_stride_one_float32_is_coalesced_and_the_outputs_are_written():
    x = np.arange(256, dtype=np.float32)
    out = np.zeros_like(x)
    report = copy.analyze(2, 128, x, out)
    np.testing.assert_array_equal(out, x)  # NumPy arguments are used in place, as by a CPU launch
    expected = warp_requests(np.arange(256), 4)
    for array, access in (("x", "load"), ("out", "store")):
        row = row_of(report, array, access)
        assert row["space"] == "global"
        assert row["requests"] == len(expected) == 8
        assert row["sectors"] == sum(s for s, _ in expected) == 32
        assert row["ideal_sectors"] == sum(i for _, i in expected)
        assert row["sectors_per_request"] == 4.0
        assert row["efficiency"] == 100.0
        assert row["accesses"] == 256 and row["bytes"] == 256 * 4
        assert row["wavefronts"] is None and row["bank_conflicts"] is None
    row = row_of(report, "x", "load")
    assert row["file"] == inspect.getsourcefile(copy.py_func)
    assert row["line"] == line_of(copy, "out[i] = x[i]")
    assert row["source"] == "out[i] = x[i]"
    assert row["column"] == len("    out[i] = ") + 1


def test_stride_32_float32_touches_a_sector_per_lane():
    x = np.arange(64 * 32, dtype=np.float32)
    out = np.zeros(64, np.float32)
    report = gather_strided.analyze(1, 64, x, out)
    np.testing.assert_array_equal(out, x[::32])
    expected = warp_requests(np.arange(64) * 32, 4)
    row = row_of(report, "x", "load")
    assert row["sectors"] == sum(s for s, _ in expected) == 64
    assert row["sectors_per_request"] == 32.0
    assert row["efficiency"] == pytest.approx(100.0 * sum(i for _, i in expected) / 64) == 12.5
    assert row_of(report, "out", "store")["efficiency"] == 100.0
    text = str(report)
    assert "kernel 'gather_strided' (test_analyze.py)" in text and "12.5%" in text and "32.00 sectors" in text and "x[i * 32]" in text


def test_float64_stride_one_takes_eight_sectors():
    x = np.arange(96, dtype=np.float64)
    out = np.zeros_like(x)
    row = row_of(copy.analyze(3, 32, x, out), "x", "load")
    assert row["requests"] == 3
    assert row["sectors_per_request"] == 8.0 == warp_requests(np.arange(32), 8)[0][0]
    assert row["efficiency"] == 100.0


@jiasu.kernel
def transpose(a, out):
    tile = jiasu.shared.array((32, 32), np.float32)
    x = jiasu.threadIdx.x
    y = jiasu.threadIdx.y
    bx = jiasu.blockIdx.x * 32
    by = jiasu.blockIdx.y * 32
    tile[y, x] = a[by + y, bx + x]
    jiasu.syncthreads()
    out[bx + y, by + x] = tile[x, y]


@jiasu.kernel
def transpose_padded(a, out):
    tile = jiasu.shared.array((32, 33), np.float32)
    x = jiasu.threadIdx.x
    y = jiasu.threadIdx.y
    bx = jiasu.blockIdx.x * 32
    by = jiasu.blockIdx.y * 32
    tile[y, x] = a[by + y, bx + x]
    jiasu.syncthreads()
    out[bx + y, by + x] = tile[x, y]


@jiasu.kernel
def transpose_fibers(a, out):  # a warp operation: its threads run as fibers, not in thread loops
    tile = jiasu.shared.array((32, 32), np.float32)
    x = jiasu.threadIdx.x
    y = jiasu.threadIdx.y
    bx = jiasu.blockIdx.x * 32
    by = jiasu.blockIdx.y * 32
    tile[y, x] = a[by + y, bx + x]
    jiasu.syncthreads()
    jiasu.syncwarp()
    out[bx + y, by + x] = tile[x, y]


@pytest.mark.parametrize("kernel, width", [(transpose, 32), (transpose_padded, 33), (transpose_fibers, 32)])
def test_shared_memory_transpose_bank_conflicts(kernel, width):
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.zeros_like(a)
    report = kernel.analyze((2, 2), (32, 32), a, out)
    np.testing.assert_array_equal(out, a.T)
    requests = 4 * 32  # 4 blocks of 32 warps; warp y holds lanes x = 0..31
    lanes = np.arange(32)
    column_ways = bank_ways(lanes * width + 7)  # lane x reads tile[x, y]: word x * width + y (y = 7, say)
    row_ways = bank_ways(7 * width + lanes)     # lane x writes tile[y, x]
    assert (column_ways, row_ways) == ((32, 1) if width == 32 else (1, 1))

    read = row_of(report, "tile", "load")
    assert read["space"] == "shared" and read["requests"] == requests
    assert read["wavefronts"] == requests * column_ways
    assert read["ideal_wavefronts"] == requests
    assert read["bank_conflicts"] == requests * (column_ways - 1)
    assert read["ways"] == read["ways_max"] == column_ways
    assert read["efficiency"] == pytest.approx(100.0 / column_ways)
    assert read["sectors"] is None
    write = row_of(report, "tile", "store")
    assert write["wavefronts"] == requests * row_ways and write["bank_conflicts"] == 0
    for array, access in (("a", "load"), ("out", "store")):
        row = row_of(report, array, access)
        assert row["requests"] == requests and row["sectors_per_request"] == 4.0 and row["efficiency"] == 100.0
    text = str(report)
    assert ("32-way" in text) == (width == 32)
    assert "tile[x, y]" in text


@jiasu.kernel
def broadcast(x, out):
    s = jiasu.shared.array(32, np.float32)
    t = jiasu.threadIdx.x
    s[t] = x[0]
    jiasu.syncthreads()
    out[t] = s[0]


def test_broadcast_reads_are_neither_uncoalesced_nor_conflicts():
    x = np.array([3.0], np.float32)
    out = np.zeros(32, np.float32)
    report = broadcast.analyze(1, 32, x, out)
    assert (out == 3.0).all()
    load = row_of(report, "x", "load")
    assert load["sectors"] == 1 and load["ideal_sectors"] == 1 and load["efficiency"] == 100.0
    read = row_of(report, "s", "load")
    assert read["wavefronts"] == 1 and read["bank_conflicts"] == 0 and read["ways"] == 1.0
    assert "none" in str(report)


@jiasu.kernel
def accumulate(x, total):
    i = jiasu.grid(1)
    x[i] += 1.0
    jiasu.atomic.add(total, 0, x[i])


def test_augmented_assignments_and_atomics():
    x = np.zeros(64, np.float32)
    total = np.zeros(1, np.float32)
    report = accumulate.analyze(2, 32, x, total)
    assert total[0] == 64.0
    update = row_of(report, "x", "load+store")  # one request per warp (each a load and a store)
    assert update["requests"] == 2 and update["sectors_per_request"] == 4.0
    atomic = row_of(report, "total", "atomic")
    assert atomic["requests"] == 2 and atomic["sectors"] == 2 and atomic["efficiency"] == 100.0


def test_requests_count_every_warp_of_every_block_on_the_thread_pool(monkeypatch):
    # The pool runs ranges of blocks on several OS threads (JIASU_CPU_THREADS may exceed the cores): each range
    # records into its own log, and the totals do not depend on how the blocks were spread.
    x = np.arange(64 * 96, dtype=np.float32)
    out = np.zeros_like(x)
    row = row_of(copy.analyze(64, 96, x, out), "x", "load")
    assert row["requests"] == 64 * 3 and row["sectors"] == 64 * 3 * 4
    np.testing.assert_array_equal(out, x)


def test_numba_kernels_and_jiasu_cpu_arrays():
    @cuda.jit
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2 * x[i * 2]

    x = jiasu.asarray(np.arange(128, dtype=np.float32), device="cpu")
    out = jiasu.zeros(64, np.float32, device="cpu")
    report = scale.analyze(1, 64, x, out)
    np.testing.assert_array_equal(np.asarray(out.get()), 2 * np.arange(0, 128, 2, dtype=np.float32))
    row = row_of(report, "x", "load")
    assert row["sectors_per_request"] == warp_requests(np.arange(32) * 2, 4)[0][0] == 8
    assert row["efficiency"] == 50.0
    assert repr(report) == "<AccessReport of kernel 'scale': 2 access sites>"
    assert report.kernel == "scale"


@jiasu.kernel
def sum_all(x, out):
    acc = 0.0
    for k in range(x.size):
        acc += x[k]
    out[jiasu.grid(1)] = acc


def test_bad_calls_and_the_cap_on_recorded_accesses():
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream'"):
        copy.analyze(1, 8, x, out, stream=0)
    with pytest.raises(TypeError):
        copy.analyze(1, 8, x)  # a missing argument
    with pytest.raises(jiasu.LaunchError, match="threads dimensions must be between 1"):  # as copy[1, 0] says
        copy.analyze(1, 0, x, out)
    with pytest.raises(IndexError, match="out of bounds"):  # the analysed build checks every index
        copy.analyze(1, 16, x, out)
    big = np.ones(5000, np.float32)
    with pytest.raises(ValueError, match="more than the analysis records for one block"):
        sum_all.analyze(1, 1024, big, np.zeros(1024, np.float32))
    report = sum_all.analyze(1, 32, big[:100], np.zeros(32, np.float32))
    assert row_of(report, "x", "load")["requests"] == 100
    assert row_of(report, "x", "load")["sectors_per_request"] == 1.0  # every lane reads x[k]: a broadcast


def test_a_kernel_without_global_or_shared_accesses():
    @jiasu.kernel
    def nothing(n):
        local = jiasu.local.array(4, np.int32)
        local[0] = n

    report = nothing.analyze(1, 32, 3)
    assert report.rows == []
    assert "no accesses" in str(report)


@cuda.jit
def reverse_halves(a, out):
    """A cooperative kernel (every block at once, each on an OS thread of its own): block b reads block 1 - b's
    elements after a grid barrier, in reverse order (a warp's lanes still read 32 consecutive elements)."""
    i = cuda.grid(1)
    g = cuda.cg.this_grid()
    a[i] = i
    g.sync()
    out[i] = a[a.size - 1 - i]


def test_cooperative_launches_log_each_block_apart():
    a = np.zeros(128, np.int64)
    out = np.zeros(128, np.int64)
    report = reverse_halves.analyze(2, 64, a, out)
    np.testing.assert_array_equal(out, np.arange(128)[::-1])
    read = [r for r in report.rows if r["array"] == "a" and r["access"] == "load"][0]
    expected = warp_requests(127 - np.arange(128), 8)
    assert read["requests"] == 4 and read["sectors"] == sum(s for s, _ in expected) == 4 * 8
