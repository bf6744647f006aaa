"""jiasu.distributed's all_reduce beside torch.distributed (NCCL backend), in the same run on the same GPUs:
bus bandwidth (busbw = size / time * 2(n-1)/n, NCCL's measure) from 1 MiB to 1 GiB of float32, and the host cost
of a small all_reduce (4 bytes, 1 KiB), as a table of ratios. With one GPU it runs a world of one, where
busbw is 0 by definition: the table shows the algorithm bandwidth (size / time) instead, and the launch overhead
is still meaningful.

    python -m jiasu.launch --nproc-per-node N bench/distributed.py [--json out.json]
    python bench/distributed.py                # a world of one
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink SHARP needs multicast, which these machines keep off

SIZES = [1 << p for p in range(20, 31, 2)]  # bytes: 1 MiB, 4 MiB, ..., 1 GiB
SMALL = [4, 1024]


def seconds_per_call(call, sync, barrier, repeats, trials=5):
    """Median over trials of the seconds per call of `repeats` back-to-back calls, the ranks started together."""
    call()
    sync()
    times = []
    for _ in range(trials):
        barrier()
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        sync()
        times.append((time.perf_counter() - start) / repeats)
    return median(times)


def repeats_for(nbytes):
    return max(3, min(50, (256 << 20) // nbytes * 5))


def default_rendezvous():
    """A world of one when no launcher set the variables (torch's env:// needs them too)."""
    if "MASTER_PORT" not in os.environ:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]), RANK="0", WORLD_SIZE="1")


def start_torch():
    """torch.distributed on NCCL, or the reason it is not there. Started first: jiasu then takes NCCL's id from it."""
    try:
        import torch
        import torch.distributed as tdist
        if not torch.cuda.is_available():
            return None, "torch has no CUDA device"
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        tdist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
        return torch, None
    except Exception as error:  # noqa: BLE001
        return None, first_line(error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-bytes", type=int, default=SIZES[-1])
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    jiasu = import_jiasu_or_skip("bench/distributed.py", args.json, "distributed")
    import jiasu.distributed as dist

    default_rendezvous()
    torch, torch_error = start_torch()
    comm = dist.init(timeout=120)
    rank, world = comm.rank, comm.world_size
    bus_factor = 2 * (world - 1) / world if world > 1 else 1.0  # a world of one: algorithm bandwidth
    results = {"benchmark": "distributed", "world_size": world, "bandwidth": "busbw" if world > 1 else "algbw",
               "rows": []}
    if torch_error:
        results["torch_error"] = torch_error

    def measure(nbytes, overhead):
        n = max(1, nbytes // 4)
        repeats = 1000 if overhead else repeats_for(nbytes)
        x = jiasu.zeros(n, "float32")
        row = {"bytes": nbytes}
        row["jiasu_s"] = seconds_per_call(lambda: dist.all_reduce(x), comm.synchronize, comm.barrier, repeats)
        if torch is not None:
            t = torch.zeros(n, device="cuda")
            row["torch_s"] = seconds_per_call(lambda: torch.distributed.all_reduce(t), torch.cuda.synchronize,
                                              torch.distributed.barrier, repeats)
            row["jiasu_over_torch"] = row["jiasu_s"] / row["torch_s"]
        for key in ("jiasu", "torch"):
            if key + "_s" in row:
                row[key + "_gbs"] = nbytes / row[key + "_s"] * bus_factor / 1e9
        return row

    for nbytes in [b for b in SIZES if b <= args.max_bytes]:
        results["rows"].append(measure(nbytes, overhead=False))
    results["small"] = [measure(nbytes, overhead=True) for nbytes in SMALL]
    results["env"] = env_info()
    dist.destroy()
    if torch is not None:
        torch.distributed.destroy_process_group()
    if rank != 0:
        return
    print(f"all_reduce, float32, world of {world} ({results['bandwidth']} in GB/s; ratio = jiasu time / torch time)")
    print(f"  {'size':>10} {'jiasu':>9} {'torch':>9} {'ratio':>7}")
    for row in results["rows"] + results["small"]:
        size = f"{row['bytes'] >> 20} MiB" if row["bytes"] >= 1 << 20 else f"{row['bytes']} B"
        if row["bytes"] in SMALL:
            cells = [f"{row['jiasu_s'] * 1e6:7.1f}us", f"{row['torch_s'] * 1e6:7.1f}us" if "torch_s" in row else "n/a"]
        else:
            cells = [f"{row['jiasu_gbs']:9.1f}", f"{row['torch_gbs']:9.1f}" if "torch_gbs" in row else "n/a"]
        ratio = f"{row['jiasu_over_torch']:7.2f}" if "jiasu_over_torch" in row else "n/a"
        print(f"  {size:>10} {cells[0]:>9} {cells[1]:>9} {ratio:>7}")
    if torch_error:
        print(f"  torch: {torch_error}")
    write_json(args.json, results)


if __name__ == "__main__":
    main()
