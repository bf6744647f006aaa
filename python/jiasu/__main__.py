"""Command line: `python -m jiasu doctor [--json]` and `python -m jiasu demo`."""
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
    commands.add_parser(
        "demo", help="add two vectors of a million floats with a Python kernel, check and time it",
        description="Add two vectors of a million floats with the seed example's @jiasu.kernel, on the active "
                    "backend (the GPU, else the CPU), check the result against NumPy and time it. Exits 0 "
                    "when it ran and was right, 1 when it failed, 2 when no backend can run it.")
    args = parser.parse_args(argv)

    if args.command == "doctor":
        from . import _doctor
        return _doctor.main(as_json=args.json)
    if args.command == "demo":
        from . import _demo
        return _demo.main()
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
