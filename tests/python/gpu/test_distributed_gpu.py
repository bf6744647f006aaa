"""jiasu.distributed through the real NCCL: a world of one runs every collective (results against NumPy), and a
world of two processes (one per GPU, skipped with fewer GPUs) runs all_reduce, all_gather and send/recv.
tests/python/test_distributed_fake.py covers the argument checks, worlds of 2-3 ranks and the watchdog on the CPU."""
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu


def nccl_or_skip():
    try:
        jiasu._core.library_info("nccl")
    except jiasu.LibraryNotFoundError as error:
        pytest.skip(f"NCCL is not installed: {error}")


def run_ranks(world, body, timeout=240):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    code = "import numpy as np, jiasu, jiasu.distributed as dist\n" + textwrap.dedent(body) + "\nprint('ALL OK')\n"
    ranks = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port, NCCL_NVLS_ENABLE="0"))
             for r in range(world)]
    try:
        outputs = [rank.communicate(timeout=timeout)[0] for rank in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
    for rank, (process, output) in enumerate(zip(ranks, outputs)):
        assert process.returncode == 0 and "ALL OK" in output, f"rank {rank}:\n{output}"


def test_world_of_one_runs_every_collective():
    nccl_or_skip()
    run_ranks(1, """
        comm = dist.init(timeout=120)
        rng = np.random.default_rng(0)
        for dtype in ["int8", "int32", "uint64", "float16", "float32", "float64"]:
            x = rng.integers(-3, 4, size=(4, 6)).astype(dtype)
            for op in ["sum", "prod", "max", "min"] + (["avg"] if np.dtype(dtype).kind == "f" else []):
                a = jiasu.asarray(x)
                assert dist.all_reduce(a, op) is a
                np.testing.assert_array_equal(a.get(), x)
                np.testing.assert_array_equal(dist.reduce_scatter(jiasu.asarray(x), op).get(), x)
            np.testing.assert_array_equal(dist.all_gather(jiasu.asarray(x)).get(), x[None])
            np.testing.assert_array_equal(dist.broadcast(jiasu.asarray(x), 0).get(), x)
            np.testing.assert_array_equal(dist.all_to_all(jiasu.asarray(x)).get(), x)
            out = jiasu.empty(x.shape, dtype)
            dist.reduce(jiasu.asarray(x), 0, "sum", out=out)
            np.testing.assert_array_equal(out.get(), x)
        stream = jiasu.Stream()
        a, b = jiasu.asarray(np.arange(8, dtype=np.float32)), jiasu.zeros(8, "float32")
        with dist.group():
            dist.send(a, 0, stream=stream)
            dist.recv(b, 0, stream=stream)
        comm.synchronize()
        np.testing.assert_array_equal(b.get(), np.arange(8, dtype=np.float32))
        child = comm.split(0)
        np.testing.assert_array_equal(child.all_reduce(jiasu.asarray(np.ones(3, np.float32))).get(), np.ones(3))
        child.destroy()
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:  # another library's GPU array, in place through DLPack / __cuda_array_interface__
            t = torch.arange(6, dtype=torch.bfloat16, device="cuda")
            dist.all_reduce(t, "max")
            torch.cuda.synchronize()
            assert t.tolist() == list(range(6))
        dist.barrier()
        dist.destroy()
    """)


def test_two_processes():
    nccl_or_skip()
    if jiasu._core.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    run_ranks(2, """
        comm = dist.init(timeout=120)
        rank = comm.rank
        x = np.arange(1 << 20, dtype=np.float32) * (rank + 1)
        total = dist.all_reduce(jiasu.asarray(x)).get()
        np.testing.assert_allclose(total, np.arange(1 << 20, dtype=np.float32) * 3)
        gathered = dist.all_gather(jiasu.asarray(x[:16])).get()
        np.testing.assert_array_equal(gathered[rank], x[:16])
        buffer = jiasu.zeros(16, "float32")
        with dist.group():
            dist.send(jiasu.asarray(x[:16]), 1 - rank)
            dist.recv(buffer, 1 - rank)
        np.testing.assert_array_equal(buffer.get(), np.arange(16, dtype=np.float32) * (2 - rank))
        dist.barrier()
        dist.destroy()
    """)
