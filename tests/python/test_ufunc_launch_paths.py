"""The elementwise engine's GPU launches on a machine without a GPU, against the stand-in libcuda of
tools/launch-overhead (launches record their arguments and do nothing): the generated kernels compile, and
each layout class packs exactly the parameters its kernel declares (the stand-in reads them from the CUBIN)."""
import pytest

from test_launch_paths import READ_LAST_LAUNCH, fake_driver, nvrtc, run_with_fake  # noqa: F401 (fixtures)


def test_elementwise_launches_pack_what_the_kernels_declare(fake_driver, nvrtc, tmp_path):  # noqa: F811
    out = run_with_fake(fake_driver, tmp_path, READ_LAST_LAUNCH + """
    n = 10000
    a, b = jiasu.asarray(np.ones(n, np.float32)), jiasu.asarray(np.ones(n, np.float32))
    c = a + b  # contiguous: 4 vectors of 4 floats per thread, 256 threads: 3 blocks
    print(last_launch() == ((3, 1, 1, 256, 1, 1, 0), packed(("Q", c.ptr), ("Q", a.ptr), ("Q", b.ptr), ("q", n))))
    d = 2.5 * a  # a Python float: a kernel parameter in the loop type
    print(last_launch() == ((3, 1, 1, 256, 1, 1, 0), packed(("Q", d.ptr), ("f", 2.5), ("Q", a.ptr), ("q", n))))
    e = a[::2] + 1  # strided: StridedParams32<1, 2> {5000 as a divider, out's stride, a's stride}, then n;
    magic = ((1 << 32) * ((1 << 13) - 5000)) // 5000 + 1  # 2^13 is the first power of two >= 5000
    print(last_launch() == ((5, 1, 1, 256, 1, 1, 0),  # 4 positions of 1 element per thread
                            packed(("Q", e.ptr), ("Q", a.ptr), ("f", 1.0), ("I", 5000), ("I", magic), ("I", 13),
                                   ("i", 4), ("i", 8), ("i", 5000))))
    g = jiasu.empty(n - 1, np.float32)
    jiasu.add(a[1:], b[1:], out=g)  # 4 bytes past the allocation's start: no 16-byte vectors
    print(last_launch() == ((10, 1, 1, 256, 1, 1, 0),
                            packed(("Q", g.ptr), ("Q", a.ptr + 4), ("Q", b.ptr + 4), ("q", n - 1))))
    b += 1
    print(last_launch()[1] == packed(("Q", b.ptr), ("Q", b.ptr), ("f", 1.0), ("q", n)))
    # A broadcast (64, 1) + (1, 256): positions of 4 floats along the rows, 4 per thread: 16384 / 16 / 256
    # blocks; StridedParams32<2, 3> {64 and 256 as dividers (powers of two: magic 1), the byte strides of out,
    # the column and the row}, then n.
    col, row = jiasu.asarray(np.ones((64, 1), np.float32)), jiasu.asarray(np.ones((1, 256), np.float32))
    h = col + row
    print(last_launch() == ((4, 1, 1, 256, 1, 1, 0),
                            packed(("Q", h.ptr), ("Q", col.ptr), ("Q", row.ptr), ("I", 64), ("I", 1), ("I", 6),
                                   ("I", 256), ("I", 1), ("I", 8), ("i", 1024), ("i", 4), ("i", 4), ("i", 0),
                                   ("i", 0), ("i", 4), ("i", 64 * 256))))
    k = col + row[:, 1:253]  # 4 bytes into the row: its vectors would not be aligned, so 1 element each
    print(last_launch()[0] == (16, 1, 1, 256, 1, 1, 0))  # 64 * 252 / 4 / 256, rounded up
    """)
    assert out == ["True"] * 7, out
