"""`python -m jiasu.launch --nproc-per-node N SCRIPT.py [args]`: one process per GPU, as torchrun starts them.

Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT, which
jiasu.distributed.init() reads. When one process fails, the others are stopped and the launcher exits with its
status; Ctrl-C stops them all. For several hosts, run it on each with --nnodes, --node-rank and the same
--master-addr / --master-port (rank 0's host).
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

GRACE_S = 5.0  # how long stopped processes get to exit before they are killed


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _processes_per_node(text):
    if text in ("gpu", "auto"):
        from . import _core
        return max(1, _core.device_count())
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, 'gpu' or 'auto', not {text!r}")
    return value


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m jiasu.launch",
        description="Start one process per GPU with torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, "
                    "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) set, for jiasu.distributed.init().")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=_processes_per_node, default=1, metavar="N",
                        help="processes on this host: a number, or 'gpu' for one per visible GPU (default: 1)")
    parser.add_argument("--nnodes", type=int, default=1, help="hosts taking part (default: 1)")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0, help="this host's number, from 0")
    parser.add_argument("--master-addr", "--master_addr", default="127.0.0.1",
                        help="the host of rank 0, which serves the rendezvous store (default: 127.0.0.1)")
    parser.add_argument("--master-port", "--master_port", type=int, default=None,
                        help="the store's port (default: a free one; required with --nnodes > 1)")
    parser.add_argument("-m", "--module", action="store_true", help="run SCRIPT as a module, like python -m")
    parser.add_argument("script", help="the program (or module, with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def _check(parser, args):
    if args.nnodes < 1:
        parser.error("--nnodes must be at least 1")
    if not 0 <= args.node_rank < args.nnodes:
        parser.error(f"--node-rank must be from 0 to {args.nnodes - 1}, not {args.node_rank}")
    if args.master_port is None:
        if args.nnodes > 1:
            parser.error("--master-port is required with --nnodes > 1 (the same on every host)")
        args.master_port = _free_port()
    elif not 0 < args.master_port < 65536:
        parser.error(f"--master-port must be from 1 to 65535, not {args.master_port}")


def _environment(args, local_rank):
    n = args.nproc_per_node
    env = dict(os.environ)
    env.update(RANK=str(args.node_rank * n + local_rank), LOCAL_RANK=str(local_rank),
               WORLD_SIZE=str(args.nnodes * n), LOCAL_WORLD_SIZE=str(n), GROUP_RANK=str(args.node_rank),
               MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port))
    return env


def _stop(processes):
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    for p in processes:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _watch(processes, first_rank):
    """Waits for every process; on the first failure stops the rest. Returns the exit status."""
    while True:
        running = False
        for local_rank, p in enumerate(processes):
            status = p.poll()
            if status is None:
                running = True
            elif status != 0:
                cause = f"signal {-status}" if status < 0 else f"status {status}"
                print(f"jiasu.launch: rank {first_rank + local_rank} exited with {cause}; stopping the others",
                      file=sys.stderr, flush=True)
                _stop(processes)
                return status if status > 0 else 128 - status
        if not running:
            return 0
        time.sleep(0.05)


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    command = [sys.executable] + (["-m", args.script] if args.module else [args.script]) + args.args
    first_rank = args.node_rank * args.nproc_per_node
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a scheduler stopping the launcher stops the job
    processes = []
    try:
        for local_rank in range(args.nproc_per_node):
            processes.append(subprocess.Popen(command, env=_environment(args, local_rank)))
        return _watch(processes, first_rank)
    except KeyboardInterrupt:
        _stop(processes)
        return 130
    finally:
        _stop(processes)


if __name__ == "__main__":
    sys.exit(main())
