"""jiasu.profile() on the CPU backend: every launch recorded with its configuration, its arrays' traffic and its
host-clock time; the summary and the table."""
import time

import numpy as np
import pytest

import jiasu


@jiasu.kernel
def axpy(y, x, a):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = x[i] * a + y[i]


@jiasu.kernel
def fill(y, v):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = v


@jiasu.kernel
def accumulate(total, x):
    i = jiasu.grid(1)
    if i < x.shape[0]:
        jiasu.atomic.add(total, 0, x[i, 0])


@jiasu.kernel
def spin(out, n):
    acc = 0.0
    for k in range(n):
        acc += k * 0.5
    out[0] = acc


@jiasu.kernel
def fails(y):
    raise ValueError("always")


@pytest.fixture(autouse=True)
def cpu_backend():
    with jiasu.backend("cpu"):
        yield


def test_each_launch_is_recorded_with_its_configuration_and_traffic():
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    two_d = np.ones((300, 4), np.float64)
    total = np.zeros(1, np.float64)
    axpy[4, 256](y, x, 2.0)  # outside: not recorded
    with jiasu.profile() as p:
        for _ in range(3):
            axpy[4, 256](y, x, 2.0)
        fill[(2, 1), (512, 1)](y, 0.0)
        accumulate[2, 256](total, two_d)
    names = [r["name"] for r in p.records]
    assert names == ["axpy"] * 3 + ["fill", "accumulate"]
    first = p.records[0]
    assert first["device"] == "cpu" and first["grid"] == (4, 1, 1) and first["block"] == (256, 1, 1)
    assert first["bytes_read"] == y.nbytes + x.nbytes and first["bytes_written"] == y.nbytes
    assert p.records[3]["grid"] == (2, 1, 1) and p.records[3]["block"] == (512, 1, 1)
    assert p.records[3]["bytes_read"] == 0 and p.records[3]["bytes_written"] == y.nbytes
    # An atomic update reads and writes `total`; x is read.
    assert p.records[4]["bytes_read"] == total.nbytes + two_d.nbytes
    assert p.records[4]["bytes_written"] == total.nbytes
    assert all(r["ms"] > 0 and r["registers"] is None and r["flops"] is None for r in p.records)
    assert sum(r["ms"] for r in p.records) <= p.wall_ms
    np.testing.assert_array_equal(total, [300.0])


def test_the_summary_groups_calls_and_the_table_lists_them():
    y = np.zeros(4096, np.float32)
    with jiasu.profile() as p:
        for _ in range(4):
            fill[16, 256](y, 1.0)
        fill[8, 512](y, 2.0)
    rows = p.summary()
    assert [(r["name"], r["calls"], r["block"]) for r in sorted(rows, key=lambda r: -r["calls"])] == \
        [("fill", 4, (256, 1, 1)), ("fill", 1, (512, 1, 1))]
    four = next(r for r in rows if r["calls"] == 4)
    times = [r["ms"] for r in p.records[:4]]
    assert four["total_ms"] == pytest.approx(sum(times))
    assert four["min_ms"] == min(times) and four["max_ms"] == max(times)
    assert four["mean_ms"] == pytest.approx(sum(times) / 4)
    table = str(p)
    assert table.splitlines()[0].split()[:3] == ["kernel", "calls", "total"]
    assert "(16, 1, 1) x (256, 1, 1)" in table and "5 launches" in table


def test_times_follow_the_work():
    out = np.zeros(1, np.float64)
    spin[1, 1](out, 10)  # compiled before the profile
    with jiasu.profile() as p:
        spin[1, 1](out, 1000)
        spin[1, 1](out, 30_000_000)
        start = time.perf_counter()
        spin[1, 1](out, 30_000_000)
        host = (time.perf_counter() - start) * 1e3
    small, big, timed = (r["ms"] for r in p.records)
    assert big > 20 * small
    assert timed <= host * 1.01


def test_profiles_do_not_nest_and_close_when_the_block_raises():
    y = np.zeros(8, np.float32)
    with jiasu.profile():
        with pytest.raises(ValueError, match="already open"):
            with jiasu.profile():
                pass
    p = jiasu.profile()
    with pytest.raises(ValueError, match="always"):
        with p:
            fill[1, 8](y, 1.0)
            fails[1, 1](y)
    assert [r["name"] for r in p.records] == ["fill"]  # the failed launch is not recorded
    with jiasu.profile() as again:
        fill[1, 8](y, 2.0)
    assert len(again.records) == 1
    np.testing.assert_array_equal(y, np.full(8, 2.0))
