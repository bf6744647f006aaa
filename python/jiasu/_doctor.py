"""`python -m jiasu doctor`: what jiasu sees on this machine, and how to fix what is missing.

`collect()` gathers the facts as a plain dict (what `--json` prints), `format_report()` turns them into
text, `main()` prints one or the other and returns the exit code: 0 when the active backend has all it
needs (CUDA: a driver, at least one GPU and NVRTC; CPU: a C++ compiler), 1 otherwise. cuDNN, cuBLAS, cuBLASLt and
NCCL are optional: their absence is a warning, as is a GPU machine's missing C++ compiler.
"""
import json
import os
import platform
import sys

# (key, name in messages, override variable, needed by the CUDA backend)
DRIVER = ("driver", "CUDA driver", "JIASU_LIBCUDA")
LIBRARIES = (
    ("nvrtc", "NVRTC", "JIASU_NVRTC", True),
    ("cudnn", "cuDNN", "JIASU_CUDNN", False),
    ("cublas", "cuBLAS", "JIASU_CUBLAS", False),
    ("cublaslt", "cuBLASLt", "JIASU_CUBLASLT", False),  # jiasu.matmul on a GPU
    ("nccl", "NCCL", "JIASU_NCCL", False),
)
CXX_FIX = "install a C++17 compiler (g++ or clang++; e.g. `apt install g++`), or set JIASU_CXX to one"

# Remedies for a driver that was found but cannot be used (jiasu.CudaError.name -> fix).
DRIVER_FIXES = {
    "CUDA_ERROR_NO_DEVICE": "no GPU is visible to the driver: check `nvidia-smi` and CUDA_VISIBLE_DEVICES",
    "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER": "update the NVIDIA GPU driver (CUDA 12 or newer: version 525+)",
    "CUDA_ERROR_INSUFFICIENT_DRIVER": "update the NVIDIA GPU driver (CUDA 12 or newer: version 525+)",
    "CUDA_ERROR_STUB_LIBRARY": "the libcuda found is the CUDA toolkit's stub: install the NVIDIA GPU driver, "
                               "or point JIASU_LIBCUDA at the real libcuda.so.1",
}


def _split_fix(message):
    """(message without its 'Fix: ...' tail, the fix) of a LibraryNotFoundError."""
    head, sep, fix = message.rpartition("Fix:")
    return (head.rstrip(), fix.strip()) if sep else (message.strip(), "")


def _missing(error, env_var, name):
    import jiasu
    message, fix = _split_fix(str(error))
    if not fix:
        if os.environ.get(env_var):
            fix = f"unset {env_var} to search the usual places, or set it to a loadable {name} library " \
                  "(the file or its folder)"
        elif isinstance(error, jiasu.CudaError):
            fix = DRIVER_FIXES.get(error.name, "check the GPU and its driver with `nvidia-smi`")
        else:
            fix = f"install {name}, or set {env_var} to the library file or its folder"
    entry = {"found": False, "error": message, "fix": fix}
    if isinstance(error, jiasu.CudaError):
        entry["cuda_error"] = error.name
    return entry


def _library(key, name, env_var):
    from . import _core
    try:
        info = _core.library_info(key)
    except Exception as error:  # LibraryNotFoundError, CudaError, or anything unexpected: report it
        return _missing(error, env_var, name)
    return {"found": True, "path": info["path"], "source": info["source"], "version": info["version"] or None}


def _gpus():
    import jiasu
    gpus = []
    for d in jiasu.devices():
        gpu = {"index": d.id, "name": d.name, "compute_capability": "%d.%d" % d.compute_capability,
               "arch": d.arch, "multiprocessors": d.multiprocessor_count, "memory_bytes": d.total_memory,
               "free_bytes": None}
        try:
            gpu["free_bytes"] = d.memory_info()[0]
        except Exception as error:
            gpu["free_error"] = str(error)
        gpus.append(gpu)
    return gpus


def _host_compiler():
    from . import _core
    try:
        found = _core.host_compiler()
    except Exception as error:
        message, fix = _split_fix(str(error))
        return {"found": False, "error": message, "fix": fix or CXX_FIX}
    return {"found": True, "path": found["path"], "identity": found["identity"], "threads": _core.cpu_threads()}


def _cache():
    from . import _core
    try:
        path = _core.cache_dir()
    except Exception as error:
        return {"dir": None, "error": str(error), "entries": 0, "bytes": 0}
    entries = size = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                size += os.path.getsize(os.path.join(root, f))
                entries += 1
            except OSError:
                pass
    return {"dir": path, "exists": os.path.isdir(path), "entries": entries, "bytes": size}


def _version(module):
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def collect():
    """Every fact the report shows, as a JSON-ready dict."""
    import jiasu
    facts = {
        "system": {"os": platform.platform(), "python": platform.python_version(),
                   "python_executable": sys.executable, "jiasu": jiasu.__version__,
                   "numpy": _version("numpy"), "ml_dtypes": _version("ml_dtypes")},
        "driver": _library(*DRIVER),
    }
    try:
        facts["gpus"] = _gpus()
    except Exception as error:
        facts["gpus"], facts["gpu_error"] = [], str(error)
    for key, name, env_var, _ in LIBRARIES:
        facts[key] = _library(key, name, env_var)
    facts["host_compiler"] = _host_compiler()
    facts["cache"] = _cache()
    try:
        facts["backend"] = jiasu.get_backend()
    except Exception as error:  # JIASU_BACKEND names a backend that cannot run here
        facts["backend"], facts["backend_error"] = None, str(error)
    cuda = facts["backend"] == "cuda"

    # What is broken (errors) or only limited (warnings), each with its remedy. GPU problems are errors
    # for the CUDA backend and warnings for the CPU one, and the other way round for the C++ compiler.
    errors, warnings = [], []
    gpu_issues = warnings if facts["backend"] == "cpu" else errors
    if facts.get("backend_error"):
        errors.append({"what": facts["backend_error"].splitlines()[0],
                       "fix": "unset JIASU_BACKEND, or set it to 'cpu'"})
    if not facts["driver"]["found"]:
        gpu_issues.append({"what": "no usable CUDA driver", "fix": facts["driver"]["fix"]})
    elif not facts["gpus"]:
        gpu_issues.append({"what": "the CUDA driver sees no GPU", "fix": DRIVER_FIXES["CUDA_ERROR_NO_DEVICE"]})
    for key, name, _, required in LIBRARIES:
        if not facts[key]["found"]:
            (gpu_issues if required and facts["driver"]["found"] else warnings).append(
                {"what": f"{name} missing" + ("" if required else " (optional)"), "fix": facts[key]["fix"]})
    if not facts["host_compiler"]["found"]:
        (warnings if cuda else errors).append({"what": "no C++ compiler (the CPU backend needs one)",
                                               "fix": facts["host_compiler"]["fix"]})
    if facts["system"]["ml_dtypes"] is None:
        warnings.append({"what": "ml_dtypes missing (needed for bfloat16)", "fix": "pip install ml_dtypes"})
    facts["errors"], facts["warnings"] = errors, warnings
    facts["ok"] = facts["backend"] is not None and not errors
    return facts


def _gib(n):
    return f"{n / 2**30:.1f} GiB"


def _size(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def format_report(facts, color=False):
    """The text report: aligned "name: value" lines under headings, then errors, warnings and fixes."""
    def paint(text, code):
        return f"\033[{code}m{text}\033[0m" if color else text

    red, green, yellow, bold = (lambda t: paint(t, 31)), (lambda t: paint(t, 32)), \
        (lambda t: paint(t, 33)), (lambda t: paint(t, 1))

    def library_line(entry, optional=False, version=True):
        if entry["found"]:
            found = entry["version"] if version and entry["version"] else "found"
            return f"{green(found)}  {entry['path']}  (via {entry['source']})"
        first, *rest = entry["error"].splitlines()
        word = yellow("missing") if optional else red("missing")
        return "\n".join([f"{word} — {first}"] + rest)

    s = facts["system"]
    sections = [("System", [("os", s["os"]), ("python", f"{s['python']}  ({s['python_executable']})"),
                            ("jiasu", s["jiasu"]), ("numpy", s["numpy"] or red("missing")),
                            ("ml_dtypes", s["ml_dtypes"] or yellow("missing"))])]
    d = facts["driver"]
    sections.append(("CUDA driver", [("driver", library_line(d, version=False))] +
                     ([("cuda version", d["version"])] if d["found"] else [])))
    gpu_rows = []
    for g in facts["gpus"]:
        free = _gib(g["free_bytes"]) + " free" if g["free_bytes"] is not None else "free memory unknown"
        gpu_rows.append((f"gpu {g['index']}", f"{g['name']}, compute capability {g['compute_capability']} "
                         f"({g['arch']}), {g['multiprocessors']} multiprocessors, "
                         f"{_gib(g['memory_bytes'])} ({free})"))
    if not gpu_rows:
        why = f" — {facts['gpu_error']}" if facts.get("gpu_error") else ""
        gpu_rows.append(("gpus", red("none") + why))
    sections.append(("GPUs", gpu_rows))
    sections.append(("CUDA libraries", [(key, library_line(facts[key], not required))
                                        for key, _, _, required in LIBRARIES]))
    c = facts["cache"]
    if c["dir"] is None:
        cache_rows = [("dir", red("unknown") + f" — {c['error']}")]
    else:
        cache_rows = [("dir", c["dir"] + ("" if c["exists"] else "  (not created yet)")),
                      ("entries", f"{c['entries']} ({_size(c['bytes'])})")]
    sections.append(("Compile cache", cache_rows))
    h = facts["host_compiler"]
    if h["found"]:
        host_rows = [("c++", f"{green(h['identity'])}  {h['path']}"), ("threads", str(h["threads"]))]
    else:
        host_rows = [("c++", (yellow if facts["backend"] == "cuda" else red)("missing") + " — " + h["error"])]
    sections.append(("CPU backend", host_rows))
    if facts["backend"] is None:
        backend = red("none") + " — " + facts["backend_error"].splitlines()[0]
    else:
        how = "JIASU_BACKEND" if os.environ.get("JIASU_BACKEND") else \
            "a GPU is present" if facts["backend"] == "cuda" else "no usable GPU"
        backend = green(facts["backend"]) + f"  ({how})"
    sections.append(("Backend", [("active", backend)]))

    width = max(len(name) for _, rows in sections for name, _ in rows) + 2
    lines = [bold("jiasu doctor")]
    for title, rows in sections:
        lines += ["", bold(title)]
        for name, value in rows:
            first, *rest = str(value).splitlines()
            lines.append(f"  {name + ':':<{width}}{first}")
            lines += [" " * (width + 2) + r for r in rest]
    lines.append("")
    name = {"cuda": "CUDA", "cpu": "CPU"}.get(facts["backend"], "")
    if facts["ok"]:
        lines.append(green(f"Everything the {name} backend needs is here.") if not facts["warnings"] else
                     green(f"The {name} backend is ready") + " (with the warnings below).")
    else:
        lines.append(red(f"Not ready: the {name} backend cannot run here." if name else "Not ready."))
    for issue in facts["errors"]:
        lines += [red("error:") + " " + issue["what"], "fix: " + issue["fix"]]
    for issue in facts["warnings"]:
        lines += [yellow("warning:") + " " + issue["what"], "fix: " + issue["fix"]]
    return "\n".join(lines)


def main(as_json=False, file=None):
    """Print the report (or the JSON) to `file` (stdout) and return the exit code."""
    file = file or sys.stdout
    facts = collect()
    if as_json:
        print(json.dumps(facts, indent=2, ensure_ascii=False), file=file)
    else:
        color = hasattr(file, "isatty") and file.isatty() and not os.environ.get("NO_COLOR")
        print(format_report(facts, color), file=file)
    return 0 if facts["ok"] else 1
