"""The CPU backend survives what the GPU survives: a memory fault in a kernel is a LaunchError naming the
kernel (as an illegal address is on the GPU), Ctrl-C stops a kernel that never ends, and the GPU's limits
(grid, shared memory, local memory) hold on the CPU with clear errors. No GPU needed."""
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import jiasu


@pytest.fixture(autouse=True)
def cpu():
    previous = jiasu.get_backend()
    jiasu.set_backend("cpu")
    yield
    jiasu.set_backend(previous)


@jiasu.kernel
def far_write(out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i + (1 << 40)] = 1.0


@jiasu.kernel
def far_read(x, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i - (1 << 40)]


@jiasu.kernel
def far_write_between_barriers(out):
    i = jiasu.grid(1)
    jiasu.syncthreads()
    if i == 77:
        out[i + (1 << 40)] = 1.0
    jiasu.syncthreads()


@jiasu.kernel
def far_write_in_a_warp(out):
    i = jiasu.grid(1)
    v = jiasu.shfl_down_sync(0xFFFFFFFF, i, 1)
    if i == 5:
        out[v + (1 << 40)] = 1.0


@jiasu.kernel
def uses_dynamic_shared(out):
    s = jiasu.shared.array(0, jiasu.float32)
    t = jiasu.threadIdx.x
    s[t] = t
    jiasu.syncthreads()
    out[t] = s[t]


@jiasu.kernel
def double(x, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = 2 * x[i]


def check_still_works():
    x = np.random.default_rng().random(3000).astype(np.float32)
    out = jiasu.full(3000, np.nan, dtype=np.float32)
    double[12, 256](jiasu.asarray(x), out)
    np.testing.assert_array_equal(out.get(), 2 * x)


@pytest.mark.parametrize("kernel, name, blocks",
                         [(far_write, "far_write", 8), (far_write_between_barriers, "far_write_between_barriers", 1),
                          (far_write_between_barriers, "far_write_between_barriers", 8),
                          (far_write_in_a_warp, "far_write_in_a_warp", 8)],
                         ids=["thread loops", "fibers, one block", "fibers", "warp"])
def test_a_memory_fault_is_a_launch_error(kernel, name, blocks):
    out = jiasu.zeros(blocks * 256, dtype=np.float32)
    for _ in range(2):  # and again: the trap is armed anew for every launch
        with pytest.raises(jiasu.LaunchError, match=rf"kernel {name} \(CPU\).*SIGSEGV.*debug=True"):
            kernel[blocks, 256](out)
    check_still_works()


def test_a_far_read_is_a_launch_error():
    x = jiasu.zeros(1024, dtype=np.float32)
    out = jiasu.zeros(1024, dtype=np.float32)
    with pytest.raises(jiasu.LaunchError, match="invalid memory access"):
        far_read[4, 256](x, out)
    check_still_works()


def test_dynamic_shared_memory_without_its_size():
    out = jiasu.zeros(64, dtype=np.float32)
    with pytest.raises(jiasu.LaunchError, match="no dynamic shared memory"):
        uses_dynamic_shared[1, 64](out)
    uses_dynamic_shared[1, 64, None, 64 * 4](out)  # with it, the kernel runs
    np.testing.assert_array_equal(out.get(), np.arange(64, dtype=np.float32))


def test_a_fault_in_one_of_many_threads_stops_the_launch_not_the_pool():
    out = jiasu.zeros(256 * 64, dtype=np.float32)
    with pytest.raises(jiasu.LaunchError):
        far_write_between_barriers[64, 256](out)
    check_still_works()


def test_shared_and_local_arrays_beyond_the_gpu_limits_do_not_compile():
    @jiasu.kernel
    def big_shared(out):
        s = jiasu.shared.array(16777216, jiasu.float64)
        s[0] = 1.0
        out[0] = s[0]

    @jiasu.kernel
    def big_local(out):
        a = jiasu.local.array(2_000_000, jiasu.float64)
        a[0] = 1.0
        out[0] = a[0]

    out = jiasu.zeros(1, dtype=np.float64)
    with pytest.raises(jiasu.CompileError, match=r"need 134217728 bytes.* at most 49152 bytes") as shared:
        big_shared[1, 1](out)
    assert shared.value.line > 0 and "shared.array" in str(shared.value)
    with pytest.raises(jiasu.CompileError, match=r"need 16000000 bytes per thread.* at most 524288 bytes"):
        big_local[1, 1](out)


def test_arrays_within_the_limits_still_work():
    @jiasu.kernel
    def near_limits(out):
        s = jiasu.shared.array(6144, jiasu.float64)   # 48 KiB
        a = jiasu.local.array(65536, jiasu.float64)   # 512 KiB
        t = jiasu.threadIdx.x
        a[65535] = t
        s[t] = a[65535] + 1
        jiasu.syncthreads()
        out[t] = s[t]

    out = jiasu.zeros(32, dtype=np.float64)
    near_limits[1, 32](out)
    np.testing.assert_array_equal(out.get(), np.arange(32) + 1.0)


def test_the_grid_and_shared_memory_keep_the_gpu_limits():
    out = jiasu.zeros(4, dtype=np.float32)
    with pytest.raises(jiasu.LaunchError, match=r"x <= 2147483647"):
        double[2**31, 1](out, out)
    with pytest.raises(jiasu.LaunchError, match=r"y and z <= 65535"):
        double[(1, 65536), 1](out, out)
    with pytest.raises(jiasu.LaunchError, match=r"232448 bytes"):
        uses_dynamic_shared[1, 4, None, 232448 + 4](out)


SPIN = """
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even where the test runs with SIGINT ignored
    import numpy as np, sys, jiasu
    jiasu.set_backend("cpu")

    @jiasu.kernel
    def spin(flag):
        while flag[0] == 0:
            pass

    @jiasu.kernel
    def wait_for_nobody(flag):
        if jiasu.threadIdx.x == 0:
            jiasu.syncthreads()   # the others never arrive: they wait for a flag nobody sets
        else:
            while jiasu.atomic.add(flag, 0, 0) == 0:
                pass

    kernel = wait_for_nobody if sys.argv[1] == "deadlock" else spin
    blocks = int(sys.argv[2])
    kernel[blocks, 64](jiasu.ones(1, dtype=np.int32))   # compiled; ends at once
    print("ready", flush=True)
    if sys.argv[1] == "read":  # after a launch, Ctrl-C still interrupts a blocking call
        import os
        os.read(os.pipe()[0], 1)
    kernel[blocks, 64](jiasu.zeros(1, dtype=np.int32))  # never ends
"""


@pytest.mark.parametrize("which, blocks", [("spin", 1), ("spin", 64), ("deadlock", 8), ("read", 1)])
def test_ctrl_c_stops_a_kernel_that_never_ends(tmp_path, which, blocks):
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent(SPIN))
    child = subprocess.Popen([sys.executable, str(script), which, str(blocks)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(0.5)
        assert child.poll() is None, child.stderr.read()
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)  # a hang guard, not a timing
    finally:
        if child.poll() is None:
            child.kill()
    err = child.stderr.read()
    assert "KeyboardInterrupt" in err, err
    assert child.returncode in (-signal.SIGINT, 1), (child.returncode, err)


def test_forall_beyond_one_grid_asks_for_a_grid_stride_loop():
    @jiasu.kernel
    def grid_stride(out, n):
        for i in range(jiasu.grid(1), n, jiasu.gridsize(1)):
            out[i % out.size] += 1

    out = jiasu.zeros(8, dtype=np.int64)
    with pytest.raises(ValueError, match=r"forall\(4611686018427387904\).*grid-stride loop"):
        grid_stride.forall(2**62)(out, 2**62)
    grid_stride[2, 4](out, 1000)  # a grid of one's choice covers n
    np.testing.assert_array_equal(out.get(), np.full(8, 125))
