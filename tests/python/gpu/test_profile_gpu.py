"""jiasu.profile() and its advisor on the GPU, against known kernels: a copy's bytes, bandwidth and verdict agree
with its measured time and the card's limits, a strided copy is flagged with k.analyze's finding, matmul's FLOP/s and
occupancy agree with the occupancy calculator; times follow torch's CUDA events; the roofline is drawn.

The pytest processes share the GPU, so a kernel's measured speed depends on what runs beside it: the tests check
what holds whatever the load (a copy is never faster than the memory allows), and bench/tuning.py reports how close
to the peak a copy gets."""
import numpy as np
import pytest

import jiasu


@jiasu.kernel
def copy(out, x):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i]


@jiasu.kernel
def copy_strided(out, x, stride):
    i = jiasu.grid(1)
    n = out.size
    if i < n:
        j = (i * stride) % n + (i * stride) // n  # every element once, neighbouring threads `stride` apart
        out[j] = x[j]


N = 1 << 26  # 256 MiB per array: far beyond L2


def test_a_copy_is_measured_within_the_memory_limits_and_a_strided_copy_is_flagged():
    x = jiasu.asarray(np.arange(N, dtype=np.float32))
    out = jiasu.empty(N, np.float32)
    blocks = N // 256
    small = 1 << 17  # 32 x 4096: a warp's 32 threads land in 32 different sectors, as in the large launch
    copy_strided.analyze(small // 256, 256, np.zeros(small, np.float32), np.ones(small, np.float32), 4096)
    copy[blocks, 256](out, x)
    copy_strided[blocks, 256](out, x, 4096)
    jiasu.synchronize()
    with jiasu.profile() as p:
        for _ in range(10):
            copy[blocks, 256](out, x)
        for _ in range(3):
            copy_strided[blocks, 256](out, x, 4096)
    np.testing.assert_array_equal(out.get()[:1000], np.arange(1000, dtype=np.float32))
    report = p.report()
    peaks = report.peaks
    assert peaks["device"] == 0 and 0 < peaks["bandwidth_gbs"] <= peaks["theoretical_bandwidth_gbs"]
    assert peaks["theoretical_bandwidth_gbs"] > 1000 and peaks["fp32_gflops"] > 10_000  # any data-centre card
    rows = {k["name"]: k for k in report.kernels}
    plain, strided = rows["copy"], rows["copy_strided"]
    for row, calls in ((plain, 10), (strided, 3)):
        assert row["calls"] == calls and row["bytes"] == 2 * 4 * N
        assert row["gbs"] == pytest.approx(row["bytes"] / (row["mean_ms"] * 1e6), rel=1e-6)
        # 512 MiB through a 50 MiB L2: no correct timing makes it faster than the memory's theoretical bandwidth.
        assert 0 < row["gbs"] <= peaks["theoretical_bandwidth_gbs"], row
        assert row["bandwidth_fraction"] == pytest.approx(row["gbs"] / peaks["bandwidth_gbs"], rel=1e-6)
        memory_bound = any("memory-bound" in line for line in row["advice"])
        assert memory_bound == (row["bandwidth_fraction"] >= 0.7), row["advice"]
        assert 0 < row["occupancy"] <= 1 and row["active_blocks"] > 0
    assert not any("uncoalesced" in line for line in plain["advice"]), plain["advice"]
    (advice,) = [line for line in strided["advice"] if "uncoalesced" in line]
    assert "x[j]" in advice and "32.0 sectors" in advice and "4.0 when" in advice, advice
    assert "copy_strided" in str(report)


def test_the_advisor_occupancy_is_the_calculators():
    out = jiasu.empty(1 << 20, np.float32)
    x = jiasu.zeros(1 << 20, np.float32)
    with jiasu.profile() as p:
        copy[(1 << 20) // 128, 128](out, x)
    (row,) = p.report().kernels
    # resources().occupancy is checked against cuOccupancyMaxActiveBlocksPerMultiprocessor in test_resources_gpu.
    expected = copy.resources(out, x).occupancy(128)
    assert row["registers"] == copy.resources(out, x).registers
    assert row["active_blocks"] == expected.active_blocks and row["occupancy"] == pytest.approx(expected.occupancy)
    assert row["best_block_size"] == expected.best_block_size and row["limiter"] == expected.limiter


def test_matmul_flops_are_counted_and_times_agree_with_torch(torch):
    m = 4096
    a = jiasu.asarray(np.random.default_rng(0).standard_normal((m, m), dtype=np.float32))
    b = jiasu.asarray(np.random.default_rng(1).standard_normal((m, m), dtype=np.float32))
    ta, tb = torch.randn(m, m, device="cuda"), torch.randn(m, m, device="cuda")
    jiasu.matmul(a, b)
    torch.matmul(ta, tb)
    jiasu.synchronize()
    torch.cuda.synchronize()
    # The best of three rounds on each side, taken in turn: other processes' kernels on the GPU slow some rounds.
    jiasu_ms, torch_ms = [], []
    for _ in range(3):
        with jiasu.profile() as p:
            for _ in range(5):
                jiasu.matmul(a, b)
        (row,) = p.report().kernels
        assert row["calls"] == 5 and row["flops"] == 2 * m ** 3
        assert row["gflops"] == pytest.approx(2 * m ** 3 / (row["mean_ms"] * 1e6), rel=1e-6)
        jiasu_ms.append(row["mean_ms"])
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            torch.matmul(ta, tb)
        end.record()
        end.synchronize()
        torch_ms.append(start.elapsed_time(end) / 5)
    # The same problem through cuBLAS(Lt) both times: within a factor of 3 whatever the card's clocks do.
    assert min(torch_ms) / 3 <= min(jiasu_ms) <= 3 * min(torch_ms), (jiasu_ms, torch_ms)


def test_the_roofline_is_drawn_on_the_gpu(tmp_path):
    pytest.importorskip("matplotlib")
    x = jiasu.asarray(np.ones(1 << 24, np.float32))
    out = jiasu.empty(1 << 24, np.float32)
    with jiasu.profile() as p:
        copy[(1 << 24) // 256, 256](out, x)
        jiasu.matmul(jiasu.ones((2048, 2048), np.float32), jiasu.ones((2048, 2048), np.float32))
    path = p.roofline(str(tmp_path / "roofline.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
