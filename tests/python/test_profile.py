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


def test_the_report_measures_the_host_peak_and_rates_each_kernel():
    n = 1 << 22
    y, x = np.ones(n, np.float32), np.ones(n, np.float32)
    axpy[n // 256, 256](y, x, 1.0)
    with jiasu.profile() as p:
        for _ in range(3):
            axpy[n // 256, 256](y, x, 1.0)
    report = p.report(flops={"axpy": 2 * n})
    peaks = report.peaks
    assert peaks["device"] == "cpu" and peaks["bandwidth_gbs"] > 0.1 and peaks["fp32_gflops"] == 0
    (row,) = report.kernels
    assert row["name"] == "axpy" and row["calls"] == 3 and row["occupancy"] is None
    assert row["bytes"] == 3 * 4 * n  # x and y read, y written
    seconds = sum(r["ms"] for r in p.records) / 1e3
    assert row["gbs"] == pytest.approx(3 * row["bytes"] / seconds / 1e9, rel=1e-6)
    assert row["bandwidth_fraction"] == pytest.approx(row["gbs"] / peaks["bandwidth_gbs"], rel=1e-6)
    assert row["flops"] == 2 * n and row["gflops"] == pytest.approx(3 * 2 * n / seconds / 1e9, rel=1e-6)
    text = str(report)
    assert "axpy" in text and "GB/s" in text and "memory:" in text
    with pytest.raises(ValueError, match="still open"):
        with jiasu.profile() as open_profile:
            open_profile.report()


def test_the_roofline_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    n = 1 << 20
    y, x = np.ones(n, np.float32), np.ones(n, np.float32)
    with jiasu.profile() as p:
        axpy[n // 256, 256](y, x, 1.0)
        fill[n // 256, 256](y, 0.0)
    path = p.roofline(str(tmp_path / "roofline.png"), flops={"axpy": 2 * n})
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_python_m_jiasu_profile_runs_a_script(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "work.py"
    script.write_text(
        "import sys\nimport numpy as np\nimport jiasu\n\n"
        "@jiasu.kernel\ndef twice(x):\n    i = jiasu.grid(1)\n    if i < x.size:\n        x[i] *= 2\n\n"
        "x = np.ones(1000, np.float32)\nfor _ in range(3):\n    twice[4, 256](x)\n"
        "print('sum', x.sum(), sys.argv[1:])\n")
    env = dict(__import__("os").environ, JIASU_BACKEND="cpu")
    result = subprocess.run([sys.executable, "-m", "jiasu", "profile", str(script), "--flag"], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "sum 8000.0 ['--flag']" in out
    assert "jiasu profile of" in out and "3 launches" in out
    assert "twice" in out.split("jiasu profile of")[1] and "memory:" in out


@jiasu.kernel
def gather_strided(out, x, stride):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i * stride]


def test_the_report_quotes_the_kernels_latest_access_analysis():
    n, stride = 1024, 32
    out, x = np.zeros(n, np.float32), np.arange(n * stride, dtype=np.float32)
    with jiasu.profile() as p:
        gather_strided[n // 128, 128](out, x, stride)
    assert not any("uncoalesced" in line for line in p.report().kernels[0]["advice"])  # not analyzed yet
    analysis = gather_strided.analyze(n // 128, 128, out, x, stride)
    (load,) = [row for row in analysis.rows if row["array"] == "x"]
    assert load["sectors_per_request"] == 32  # 32 lanes, each in its own 32-byte sector
    (row,) = p.report().kernels
    (advice,) = [line for line in row["advice"] if "uncoalesced" in line]
    assert f"test_profile.py:{load['line']} `out[i] = x[i * stride]` (out, x)" in advice
    assert "32.0 sectors" in advice and "4.0 when" in advice  # 32 float32s need 4 sectors when contiguous
    np.testing.assert_array_equal(out, x[::stride])
    analysis = gather_strided.analyze(n // 128, 128, out, x, 1)  # the latest analysis replaces the earlier one
    assert not any("uncoalesced" in line for line in p.report().kernels[0]["advice"])


@jiasu.kernel
def transpose_tile(a, out):
    tile = jiasu.shared.array((32, 32), np.float32)
    x, y = jiasu.threadIdx.x, jiasu.threadIdx.y
    tile[y, x] = a[jiasu.blockIdx.y * 32 + y, jiasu.blockIdx.x * 32 + x]
    jiasu.syncthreads()
    out[jiasu.blockIdx.x * 32 + y, jiasu.blockIdx.y * 32 + x] = tile[x, y]


def test_the_report_names_bank_conflicts():
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.zeros_like(a)
    with jiasu.profile() as p:
        transpose_tile[(2, 2), (32, 32)](a, out)
    np.testing.assert_array_equal(out, a.T)
    transpose_tile.analyze((2, 2), (32, 32), a, out)
    (row,) = p.report().kernels
    (advice,) = [line for line in row["advice"] if "bank conflicts" in line]
    assert advice.startswith("32-way shared-memory bank conflicts at ") and "= tile[x, y]` (tile):" in advice
