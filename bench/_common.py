"""Small helpers shared by the bench/ scripts (no GPU work, no heavy imports)."""
import datetime
import json
import os
import platform
import statistics
import sys


def median(values):
    return statistics.median(values) if values else None


def first_line(error):
    """A one-line description of an exception, for 'n/a' reasons."""
    text = f"{type(error).__name__}: {error}".strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def env_info():
    """Hardware and versions, from the modules that are already imported (nothing new is imported)."""
    info = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
    }
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        info["numpy"] = numpy.__version__
    jiasu = sys.modules.get("jiasu")
    if jiasu is not None:
        info["jiasu"] = getattr(jiasu, "__version__", "?")
        try:
            if jiasu.is_available():
                device = jiasu.get_device()
                info["gpu"] = device.name
                info["gpu_arch"] = device.arch
                info["cuda_driver"] = jiasu._core.library_info("driver")["version"]
            info["nvrtc"] = jiasu._core.library_info("nvrtc")["version"]
        except Exception as error:  # noqa: BLE001 - versions are best effort
            info["jiasu_info_error"] = first_line(error)
    torch = sys.modules.get("torch")
    if torch is not None:
        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        info["cupy"] = cupy.__version__
        try:
            info["cupy_cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        except Exception:  # noqa: BLE001
            pass
    if "numba" in sys.modules:
        try:
            from importlib.metadata import version
            info["numba_cuda"] = version("numba-cuda")
        except Exception:  # noqa: BLE001
            info["numba"] = sys.modules["numba"].__version__
    return info


def import_numba_cuda():
    """numba.cuda, under NumPy 2.5 too (numba still refers to np.row_stack, which NumPy removed)."""
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda
    return cuda


def write_json(path, data):
    if not path:
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write("\n")
    print(f"wrote {path}")


def import_jiasu_or_skip(script, json_path, benchmark):
    """Import jiasu and check for a GPU; when there is none, say so, write a 'skipped' JSON and exit 0."""
    try:
        import jiasu
    except Exception as error:  # noqa: BLE001
        reason = f"jiasu cannot be imported ({first_line(error)})"
        print(f"{script}: {reason}; nothing to measure.")
        write_json(json_path, {"benchmark": benchmark, "skipped": reason, "env": env_info()})
        sys.exit(1)
    available = False
    try:
        available = jiasu.is_available()
    except Exception as error:  # noqa: BLE001
        print(f"{script}: jiasu.is_available() raised {first_line(error)}")
    if not available:
        reason = "no CUDA GPU (jiasu.is_available() is False)"
        print(f"{script}: {reason}; nothing to measure. Run it on a machine with an NVIDIA GPU.")
        write_json(json_path, {"benchmark": benchmark, "skipped": reason, "env": env_info()})
        sys.exit(0)
    return jiasu


def event_timer(jiasu, torch, library):
    """A function (fn, iters) -> seconds per call of fn, timed by `library`'s CUDA events ("jiasu" or "torch")
    around `iters` calls, after a synchronize."""
    def run(fn, iters):
        if library == "jiasu":
            start, end = jiasu.Event(), jiasu.Event()
        else:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iters
    return run
