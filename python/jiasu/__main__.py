"""Command line: `python -m jiasu doctor [--json]`, `python -m jiasu demo [nn]`,
`python -m jiasu numba SCRIPT.py [args]` and `python -m jiasu profile SCRIPT.py [args]`."""
import argparse
import sys


def main(argv=None):
    from . import __version__
    parser = argparse.ArgumentParser(prog="python -m jiasu",
                                     description="jiasu (加速): GPU acceleration for Python.")
    parser.add_argument("--version", action="version", version=f"jiasu {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")
    doctor = commands.add_parser(
        "doctor", help="check the driver, GPUs, CUDA libraries and host compiler; say how to fix what is missing",
        description="Check the driver, GPUs, CUDA libraries and host C++ compiler jiasu uses, say which backend "
                    "is active and how to fix what is missing. Exits 0 when a backend is ready, 1 otherwise.")
    doctor.add_argument("--json", action="store_true", help="print the facts as JSON")
    demo = commands.add_parser(
        "demo", help="add two vectors of a million floats with a Python kernel (or, with `nn`, train a CNN)",
        description="Add two vectors of a million floats with the seed example's @jiasu.kernel, on the active "
                    "backend (the GPU, else the CPU), check the result against NumPy and time it. Exits 0 "
                    "when it ran and was right, 1 when it failed, 2 when no backend can run it. "
                    "`demo nn` trains a small CNN with jiasu.nn on synthetic images (beside PyTorch where it has "
                    "a GPU) and exits 0 when the loss fell below half its start.")
    demo.add_argument("which", nargs="?", choices=["add", "nn"], default="add", help="which demo (default: add)")
    demo.add_argument("--plot", metavar="FILE.png", help="nn: draw the loss curves (needs matplotlib)")
    demo.add_argument("--epochs", type=int, default=6, help="nn: epochs to train (default: 6)")
    numba = commands.add_parser(
        "numba", help="run a Numba-CUDA program unchanged, jiasu serving `numba` and `numba.cuda`",
        description="Run SCRIPT.py (with its arguments) as __main__, its `from numba import cuda` served by "
                    "jiasu.cuda for this run. Names jiasu does not serve raise NotImplementedError.")
    numba.add_argument("script", help="the program")
    numba.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    profile = commands.add_parser(
        "profile", help="run a program under jiasu.profile() and print its kernels' times and the advisor's report",
        description="Run SCRIPT.py (with its arguments) as __main__ with every kernel launch, matmul and convolution "
                    "recorded, then print the table of times and the advisor's report (occupancy, bandwidth against "
                    "the device's measured peak, advice). Exits with the script's status.")
    profile.add_argument("--roofline", metavar="FILE.png", help="also draw the roofline (needs matplotlib)")
    profile.add_argument("script", help="the program")
    profile.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args(argv)

    if args.command == "doctor":
        from . import _doctor
        return _doctor.main(as_json=args.json)
    if args.command == "demo" and args.which == "nn":
        from . import _demo_nn
        return _demo_nn.main(plot_path=args.plot, epochs=args.epochs)
    if args.command == "numba":
        from . import _numba_shim
        return _numba_shim.main(args.script, args.args)
    if args.command == "profile":
        from . import _profile
        return _profile.main(args.script, args.args, roofline=args.roofline)
    if args.command == "demo":
        from . import _demo
        return _demo.main()
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
