"""CUDA graphs: a sequence of small kernels launched one by one from Python against the same sequence replayed
as one graph (jiasu.graph), beside torch.cuda.CUDAGraph replaying the same jiasu kernels (captured on torch's
stream) and torch's own eager and graphed equivalent, all in one run on one GPU.

Goals (issue 14): jiasu's replay >= 5x faster than its eager launches; replay time <= torch's replay of the
same kernels.

    python bench/graphs.py [--kernels 100] [--n 4096] [--json out.json]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

import numpy as np  # noqa: E402


def per_sequence(run, sync, repeats, trials=7):
    """Seconds per call of run() (one whole sequence), the median over trials of `repeats` calls each."""
    run()
    sync()
    times = []
    for _ in range(trials):
        sync()
        start = time.perf_counter()
        for _ in range(repeats):
            run()
        sync()
        times.append((time.perf_counter() - start) / repeats)
    return median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100, help="kernels in the sequence")
    parser.add_argument("--n", type=int, default=4096, help="elements each kernel updates")
    parser.add_argument("--repeats", type=int, default=50, help="sequences per timing")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    jiasu = import_jiasu_or_skip("bench/graphs.py", args.json, "graphs")

    @jiasu.kernel
    def axpb(y, a, b):
        i = jiasu.grid(1)
        if i < y.size:
            y[i] = y[i] * a + b

    n, count = args.n, args.kernels
    threads = 256
    grid = (n + threads - 1) // threads
    a, b = np.float32(0.999), np.float32(0.001)
    y = jiasu.asarray(np.ones(n, np.float32))

    def eager():
        for _ in range(count):
            axpb[grid, threads](y, a, b)

    with jiasu.graph() as g:
        eager()
    results = {"benchmark": "graphs", "kernels": count, "n": n, "nodes": g.nodes}
    sync = jiasu.synchronize
    results["jiasu_eager_us"] = per_sequence(eager, sync, args.repeats) * 1e6
    results["jiasu_graph_us"] = per_sequence(g.replay, sync, args.repeats) * 1e6
    # Correctness beside the timing: one more replay from a known state equals NumPy's float32 recurrence.
    y.set(np.ones(n, np.float32))
    g.replay()
    expected = np.ones(n, np.float32)
    for _ in range(count):
        expected = expected * a + b
    results["replay_matches_numpy"] = bool(np.allclose(y.get(), expected, rtol=1e-5))

    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no GPU")
        t = torch.ones(n, device="cuda")
        torch_sync = torch.cuda.synchronize
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):  # the same jiasu kernels, launched on the stream torch captures
            handle = side.cuda_stream
            jy = jiasu.asarray(np.ones(n, np.float32))
            for _ in range(3):
                axpb[grid, threads, handle](jy, a, b)
        side.synchronize()
        same_kernels = torch.cuda.CUDAGraph()
        with torch.cuda.graph(same_kernels):
            handle = torch.cuda.current_stream().cuda_stream
            for _ in range(count):
                axpb[grid, threads, handle](jy, a, b)
        results["torch_graph_same_kernels_us"] = per_sequence(same_kernels.replay, torch_sync, args.repeats) * 1e6

        def torch_one_kernel():  # torch's nearest one-kernel step (y*a+b in place takes two)
            for _ in range(count):
                t.mul_(a)

        results["torch_eager_mul_us"] = per_sequence(torch_one_kernel, torch_sync, args.repeats) * 1e6
        torch_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(torch_graph):
            torch_one_kernel()
        results["torch_graph_mul_us"] = per_sequence(torch_graph.replay, torch_sync, args.repeats) * 1e6
        results["torch"] = torch.__version__
    except Exception as error:  # noqa: BLE001
        results["torch_error"] = first_line(error)

    results["speedup_vs_eager"] = results["jiasu_eager_us"] / results["jiasu_graph_us"]
    if "torch_graph_same_kernels_us" in results:
        results["replay_vs_torch"] = results["jiasu_graph_us"] / results["torch_graph_same_kernels_us"]
    results["goals"] = {"speedup_vs_eager": ">= 5", "replay_vs_torch": "<= 1.0"}
    results["env"] = env_info()
    print(f"{count} kernels of {n} elements ({g.nodes} graph nodes):")
    for key in ("jiasu_eager_us", "jiasu_graph_us", "torch_graph_same_kernels_us", "torch_eager_mul_us",
                "torch_graph_mul_us"):
        if key in results:
            print(f"  {key:30} {results[key]:9.1f} us per sequence ({results[key] / count:.2f} us per kernel)")
    print(f"  replay speed-up over eager launches: {results['speedup_vs_eager']:.2f}x (goal >= 5)")
    if "replay_vs_torch" in results:
        print(f"  replay time / torch's replay of the same kernels: {results['replay_vs_torch']:.3f} (goal <= 1.0)")
    print(f"  replay matches NumPy: {results['replay_matches_numpy']}")
    write_json(args.json, results)


if __name__ == "__main__":
    main()
