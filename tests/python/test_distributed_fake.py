"""jiasu.distributed on a machine without a GPU: jiasu's own code (argument checks, the dtype and op mapping, the
non-blocking init, the watchdog, groups, split) against a stand-in NCCL (fake_nccl.cpp, which works across
processes through files and reduces with NCCL's semantics) and the stand-in libcuda of tools/launch-overhead,
whose device memory is host memory. Worlds of 2 and 3 processes run every collective against NumPy; a rank killed
mid-job makes the others raise DistributedTimeoutError instead of hanging. The real NCCL runs in
tests/python/gpu/test_distributed_gpu.py."""
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from support import FAKE_DRIVER, HERE, build_stand_ins


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return build_stand_ins(tmp_path_factory.mktemp("fake_gpu"), {
        "libcuda.so.1": FAKE_DRIVER, "libnccl.so.2": os.path.join(HERE, "fake_nccl.cpp")})


PRELUDE = """
import ctypes, os, sys, time
import ml_dtypes
import numpy as np
import jiasu
import jiasu.distributed as dist

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", BF16]
fake = ctypes.CDLL(jiasu._core.library_info("nccl")["path"])

def last_call():
    datatype, op, count, blocking = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t(), ctypes.c_int()
    fake.fake_nccl_last_call(ctypes.byref(datatype), ctypes.byref(op), ctypes.byref(count), ctypes.byref(blocking))
    return datatype.value, op.value, count.value, blocking.value

def data(rank, shape, dtype, salt=0):
    # Small values, so that sums and products stay exact in every dtype (including int8 products of 3 ranks).
    rng = np.random.default_rng(1000 * salt + rank)
    values = rng.integers(-3, 4, size=shape) if np.dtype(dtype).kind != "u" else rng.integers(0, 5, size=shape)
    return values.astype(dtype)

def gpu(x):
    return jiasu.asarray(x, device=0)

def host(a):
    return np.asarray(a.get())

def reference(op, arrays, dtype):
    wide = np.stack([a.astype(np.float64) for a in arrays])
    result = {"sum": wide.sum(0), "prod": wide.prod(0), "max": wide.max(0), "min": wide.min(0),
              "avg": wide.mean(0)}[op]
    if op == "avg" and np.dtype(dtype).kind in "iu":
        result = np.trunc(result)
    return result

def expect(got, wanted, dtype):
    got = np.asarray(got).astype(np.float64)
    assert got.shape == wanted.shape, (got.shape, wanted.shape)
    tolerance = {"float16": 1e-3, "bfloat16": 8e-3}.get(np.dtype(dtype).name, 1e-6)
    np.testing.assert_allclose(got, wanted, rtol=tolerance, atol=tolerance)

def error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {error}".splitlines()[0]
    return "no error"
"""


def fake_env(fakes, tmp_path, **extra):
    env = dict(os.environ, JIASU_LIBCUDA=fakes[0], JIASU_NCCL=fakes[1], JIASU_CACHE_DIR=str(tmp_path / "cache"),
               TMPDIR=str(tmp_path))
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    env.update(extra)
    return env


def write_script(tmp_path, body):
    script = tmp_path / "probe.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nprint('ALL OK', flush=True)\n")
    return script


def run(fakes, tmp_path, body):
    script = write_script(tmp_path, body)
    result = subprocess.run([sys.executable, str(script)], env=fake_env(fakes, tmp_path), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "ALL OK" in result.stdout, result.stdout + result.stderr
    return result.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_world(fakes, tmp_path, world, body, timeout=120, **extra):
    """Runs the script as ranks 0..world-1, bootstrapped as torchrun does; returns each rank's (returncode,
    output, seconds)."""
    script = write_script(tmp_path, body)
    port = str(free_port())
    start = time.monotonic()
    ranks = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=fake_env(fakes, tmp_path, RANK=str(r), WORLD_SIZE=str(world),
                                           MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **extra))
             for r in range(world)]
    results = []
    try:
        for rank in ranks:
            output, _ = rank.communicate(timeout=timeout)
            results.append((rank.returncode, output, time.monotonic() - start))
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    return results


def assert_all_ok(results):
    for rank, (code, output, _) in enumerate(results):
        assert code == 0 and "ALL OK" in output, f"rank {rank}:\n{output}"


def test_world_of_one_without_variables(fakes, tmp_path):
    run(fakes, tmp_path, """
        assert not dist.is_initialized()
        assert "RuntimeError" in error_of(lambda: dist.get_rank())
        comm = dist.init(timeout=30)
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        assert comm is dist.default_communicator() and comm.device == 0
        assert last_call()[3] == 0  # the config asked for NCCL's non-blocking mode
        x = data(0, (5, 3), "float32")
        a = gpu(x)
        assert dist.all_reduce(a) is a
        expect(host(a), x.astype(np.float64), "float32")
        gathered = dist.all_gather(a)
        assert gathered.shape == (1, 5, 3)
        expect(host(gathered), x[None].astype(np.float64), "float32")
        expect(host(dist.reduce_scatter(a)), x.astype(np.float64), "float32")
        expect(host(dist.all_to_all(a)), x.astype(np.float64), "float32")
        expect(host(dist.broadcast(a, 0)), x.astype(np.float64), "float32")
        out = jiasu.empty((5, 3), "float32", device=0)
        assert dist.reduce(a, 0, "max", out=out) is out
        expect(host(out), x.astype(np.float64), "float32")
        with dist.group():  # a send to oneself and its receive, issued together
            dist.send(a, 0)
            received = dist.recv(jiasu.empty((5, 3), "float32", device=0), 0)
        expect(host(received), x.astype(np.float64), "float32")
        dist.barrier()
        comm.synchronize()
        dist.destroy_process_group()
        assert not dist.is_initialized()
        assert "DistributedError" in error_of(lambda: comm.all_reduce(a)) and "destroyed" in error_of(lambda: comm.all_reduce(a))
        dist.init(0, 1, timeout=30)  # again, after destroy
        dist.destroy()
    """)


def test_dtype_and_op_mapping(fakes, tmp_path):
    run(fakes, tmp_path, """
        dist.init(timeout=30)
        for code, dtype in enumerate(DTYPES):
            a = gpu(data(0, (7,), dtype))
            dist.all_reduce(a)
            assert last_call()[:3] == (code, 0, 7), (dtype, last_call())
        a = gpu(data(0, (2, 3), "float32"))
        for code, op in enumerate(["sum", "prod", "max", "min", "avg"]):
            dist.all_reduce(a, op)
            assert last_call()[:3] == (7, code, 6), (op, last_call())
            dist.reduce_scatter(a, op)
            assert last_call()[:2] == (7, code)
        dist.all_gather(a)
        assert last_call()[:3] == (7, -1, 6)
        dist.destroy()
    """)


def test_argument_errors(fakes, tmp_path):
    run(fakes, tmp_path, """
        assert "RuntimeError" in error_of(lambda: dist.all_reduce(gpu(np.ones(3, np.float32))))
        assert error_of(lambda: dist.init(timeout=0)).startswith("ValueError")
        assert error_of(lambda: dist.init(rank=2, world_size=2)).startswith("ValueError")
        assert error_of(lambda: dist.init(id_exchange="carrier pigeon")).startswith("ValueError")
        comm = dist.init(timeout=30)
        assert error_of(lambda: dist.init()).startswith("RuntimeError")
        a = gpu(np.ones((4, 3), np.float32))
        message = error_of(lambda: dist.all_reduce(np.ones(3, np.float32)))
        assert message.startswith("TypeError") and "ndarray on the CPU" in message, message
        cpu = jiasu.asarray(np.ones(3, np.float32), device="cpu")
        assert error_of(lambda: dist.all_reduce(cpu)).startswith("TypeError")
        for dtype in ["complex64", "bool", "int16"]:
            message = error_of(lambda: dist.all_reduce(gpu(np.ones(3, dtype))))
            assert message.startswith("TypeError") and dtype in message and "bfloat16" in message, message
        message = error_of(lambda: dist.all_reduce(a, "mean"))
        assert message.startswith("ValueError") and "'avg'" in message and "'mean'" in message, message
        assert error_of(lambda: dist.broadcast(a, 1)).startswith("ValueError")
        assert error_of(lambda: dist.reduce(a, -1)).startswith("ValueError")
        assert error_of(lambda: dist.send(a, 1)).startswith("ValueError")
        assert error_of(lambda: dist.recv(a, 5)).startswith("ValueError")
        message = error_of(lambda: dist.all_reduce(a, out=jiasu.empty((3, 4), "float32", device=0)))
        assert message.startswith("ValueError") and "(3, 4)" in message, message
        assert error_of(lambda: dist.all_reduce(a, out=jiasu.empty((4, 3), "float64", device=0))).startswith("ValueError")
        assert error_of(lambda: dist.all_gather(a, out=jiasu.empty((4, 3), "float32", device=0))).startswith("ValueError")
        message = error_of(lambda: dist.all_reduce(a.T))
        assert message.startswith("ValueError") and "contiguous" in message, message
        assert error_of(lambda: dist.all_reduce(a, stream="fast")).startswith("TypeError")
        assert error_of(lambda: comm.split("red")).startswith("TypeError")
        dist.all_reduce(a)  # the communicator still works after refused calls
        dist.destroy()
    """)


def test_async_error_fails_the_communicator(fakes, tmp_path):
    run(fakes, tmp_path, """
        comm = dist.init(timeout=30)
        a = gpu(np.ones(4, np.float32))
        dist.all_reduce(a)
        fake.fake_nccl_fail_async(6)  # ncclRemoteError, seen by the watchdog
        deadline = time.monotonic() + 10
        while "DistributedError" not in error_of(comm.synchronize):
            assert time.monotonic() < deadline, "the watchdog did not report the error"
            time.sleep(0.01)
        message = error_of(lambda: dist.all_reduce(a))
        assert message.startswith("DistributedError") and "remote process exited" in message, message
        assert "DistributedError" in error_of(dist.barrier)
        try:
            dist.all_reduce(a)
        except jiasu.DistributedError as error:
            assert error.code == 6 and not isinstance(error, TimeoutError)
        dist.destroy()  # a failed communicator is already aborted: destroy does not raise
    """)


@pytest.mark.parametrize("world", [2, 3])
def test_every_collective_against_numpy(fakes, tmp_path, world):
    results = run_world(fakes, tmp_path, world, """
        dist.init(timeout=60)
        rank, world = dist.get_rank(), dist.get_world_size()
        for dtype in DTYPES:
            for shape in [(world,), (world * 3, 5)]:
                inputs = [data(r, shape, dtype) for r in range(world)]
                mine = inputs[rank]
                for op in ["sum", "prod", "max", "min", "avg"]:
                    if op == "avg" and np.dtype(dtype).kind in "iu":
                        continue  # NCCL's integer average truncates; checked for floats
                    wanted = reference(op, inputs, dtype)
                    a = gpu(mine)
                    expect(host(dist.all_reduce(a, op)), wanted, dtype)
                    out = jiasu.empty(shape, mine.dtype, device=0)
                    dist.reduce(gpu(mine), 1 % world, op, out=out)
                    if rank == 1 % world:
                        expect(host(out), wanted, dtype)
                    rows = shape[0] // world
                    expect(host(dist.reduce_scatter(gpu(mine), op)), wanted[rank * rows:(rank + 1) * rows], dtype)
                expect(host(dist.broadcast(gpu(mine), world - 1)), inputs[world - 1].astype(np.float64), dtype)
                expect(host(dist.all_gather(gpu(mine))), np.stack(inputs).astype(np.float64), dtype)
                rows = shape[0] // world
                wanted = np.concatenate([inputs[r][rank * rows:(rank + 1) * rows] for r in range(world)])
                expect(host(dist.all_to_all(gpu(mine))), wanted.astype(np.float64), dtype)
        dist.barrier()
        dist.destroy()
    """)
    assert_all_ok(results)


def test_groups_point_to_point_and_split(fakes, tmp_path):
    results = run_world(fakes, tmp_path, 3, """
        comm = dist.init(timeout=60)
        rank, world = comm.rank, comm.world_size
        # A ring: everyone sends to the next rank and receives from the previous one, issued as one group.
        mine = data(rank, (6,), "float32")
        got = jiasu.empty((6,), "float32", device=0)
        with dist.group():
            dist.send(gpu(mine), (rank + 1) % world)
            dist.recv(got, (rank - 1) % world)
        expect(host(got), data((rank - 1) % world, (6,), "float32").astype(np.float64), "float32")
        # Several collectives in one group, on a stream of their own.
        stream = jiasu.Stream()
        a, b = gpu(mine), gpu(mine * 2)
        with dist.group():
            dist.all_reduce(a, stream=stream)
            dist.all_reduce(b, "max", stream=stream)
        comm.synchronize()
        everyone = [data(r, (6,), "float32") for r in range(world)]
        expect(host(a), reference("sum", everyone, "float32"), "float32")
        expect(host(b), reference("max", [x * 2 for x in everyone], "float32"), "float32")
        # Split: ranks 0 and 2 (ordered by descending key) and rank 1 alone.
        child = comm.split(rank % 2, key=-rank)
        assert child.world_size == (2 if rank % 2 == 0 else 1)
        assert child.rank == {0: 1, 1: 0, 2: 0}[rank]
        members = [0, 2] if rank % 2 == 0 else [1]
        expect(host(child.all_reduce(gpu(mine))), reference("sum", [everyone[r] for r in members], "float32"), "float32")
        gathered = host(child.all_gather(gpu(mine)))
        expect(gathered, np.stack([everyone[r] for r in sorted(members, key=lambda r: -r)]).astype(np.float64), "float32")
        other = comm.split(-1 if rank == 1 else 0)  # a negative color leaves rank 1 out
        assert (other is None) == (rank == 1)
        if other is not None:
            assert other.world_size == 2
            other.destroy()
        child.destroy()
        dist.barrier()
        dist.destroy()
    """)
    assert_all_ok(results)


def test_a_killed_peer_makes_the_others_time_out(fakes, tmp_path):
    results = run_world(fakes, tmp_path, 3, """
        dist.init(timeout=3)
        rank = dist.get_rank()
        a = gpu(np.ones(8, np.float32))
        dist.all_reduce(a)
        dist.barrier()
        if rank == 2:
            os._exit(17)  # dies without a word
        start = time.monotonic()
        try:
            dist.all_reduce(a)
            dist.barrier()
        except jiasu.DistributedTimeoutError as error:
            assert isinstance(error, TimeoutError) and "within 3 s" in str(error) and f"rank {rank} of 3" in str(error), error
            print("TIMED OUT after", round(time.monotonic() - start, 1), flush=True)
        else:
            raise AssertionError("no timeout")
        message = error_of(lambda: dist.all_reduce(a))  # the communicator stays failed, with the same reason
        assert message.startswith("DistributedTimeoutError"), message
    """, timeout=60, JIASU_FAKE_NCCL_WAIT_S="30")
    assert results[2][0] == 17
    for code, output, seconds in results[:2]:
        assert code == 0 and "TIMED OUT" in output and "ALL OK" in output, output
        assert seconds < 25, output  # the 3 s timeout, not the stand-in's own 30 s limit


def test_debug_mode_finds_calls_that_disagree(fakes, tmp_path):
    results = run_world(fakes, tmp_path, 2, """
        comm = dist.init(timeout=60)
        rank = comm.rank
        assert comm._comm.check_calls
        a = gpu(np.full(8, rank + 1, np.float32))
        expect(host(dist.all_reduce(a)), np.full(8, 3.0), "float32")  # calls that agree go through
        # Rank 1 passes more elements: without the check NCCL would hang or mix data; here both ranks raise.
        message = error_of(lambda: dist.all_reduce(gpu(np.ones(8 + rank, np.float32))))
        assert message == (f"ValueError: the ranks' calls disagree (seen by rank {rank} of 2): rank 0 called all_reduce "
                           "of 8 float32 (sum); rank 1 called all_reduce of 9 float32 (sum); nothing was sent"), message
        message = error_of(lambda: dist.broadcast(gpu(np.ones(4, ["float32", "int32"][rank])), root=rank))
        assert "broadcast of 4 int32 with root 1" in message and "broadcast of 4 float32 with root 0" in message, message
        message = error_of(lambda: dist.all_reduce(a, ["sum", "max"][rank]))
        assert "(sum)" in message and "(max)" in message, message
        # Nothing was sent, so the communicator is still in step.
        expect(host(dist.all_gather(gpu(np.full(3, rank, np.int64)))), np.array([[0] * 3, [1] * 3]), "int64")
        dist.destroy()
    """, JIASU_DISTRIBUTED_DEBUG="1")
    assert_all_ok(results)


def test_init_again_after_destroy(fakes, tmp_path):
    # Each init shares a new id; rank 0's store of the first one must not hand the old id to a fast peer.
    results = run_world(fakes, tmp_path, 2, """
        for round in range(3):
            comm = dist.init(timeout=30)
            a = gpu(np.full(4, comm.rank + round, np.float32))
            expect(host(dist.all_reduce(a)), np.full(4, 1 + 2 * round), "float32")
            dist.destroy()
            assert not dist.is_initialized()
    """)
    assert_all_ok(results)


# Stand-ins for torch.distributed and mpi4py that broadcast through a TCPStore of their own (at $STANDIN_PORT), so
# that the probe can see jiasu take the id from an initialised torch.distributed or from MPI, never from its own
# store: MASTER_PORT is not set.
STANDIN_MODULES = """
import pickle, sys, types
from jiasu.distributed import TCPStore
_rank = int(os.environ["RANK"])
_store = TCPStore("127.0.0.1", int(os.environ["STANDIN_PORT"]), 2, is_master=_rank == 0, timeout=30)
calls = []
def _bcast(obj, root):
    calls.append(root)
    if _rank == root:
        _store.set("object", pickle.dumps(obj))
        return obj
    return pickle.loads(_store.get("object"))
torch = types.ModuleType("torch")
torch.distributed = types.ModuleType("torch.distributed")
torch.distributed.is_available = lambda: True
torch.distributed.is_initialized = lambda: True
def broadcast_object_list(box, src=0):
    box[0] = _bcast(box[0], src)
torch.distributed.broadcast_object_list = broadcast_object_list
mpi4py = types.ModuleType("mpi4py")
mpi4py.MPI = types.SimpleNamespace(COMM_WORLD=types.SimpleNamespace(bcast=lambda obj, root=0: _bcast(obj, root)))
sys.modules.update({"torch": torch, "torch.distributed": torch.distributed, "mpi4py": mpi4py})
"""


@pytest.mark.parametrize("how", [None, "mpi"])
def test_the_id_through_torch_distributed_or_mpi(fakes, tmp_path, how):
    results = run_world(fakes, tmp_path, 2, STANDIN_MODULES + textwrap.dedent(f"""
        del os.environ["MASTER_PORT"]
        comm = dist.init(timeout=30, id_exchange={how!r})  # None: torch.distributed is initialised, so through it
        assert calls == [0], calls
        a = gpu(np.full(3, comm.rank + 1, np.float32))
        expect(host(dist.all_reduce(a)), np.full(3, 3.0), "float32")
        dist.destroy()
    """), STANDIN_PORT=str(free_port()))
    assert_all_ok(results)
