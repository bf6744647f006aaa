"""`python -m jiasu doctor` and `python -m jiasu demo`, each run in a subprocess."""
import json
import os
import subprocess
import sys

import pytest

import jiasu

from support import nvrtc_missing

HAS_GPU = jiasu.is_available()
# The gpu marker is skipped by the conftest when no GPU is present; the skipif keeps this file right
# on its own too. The no-GPU expectations are the mirror image.
def gpu(test):
    return pytest.mark.gpu(pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")(test))


no_gpu = pytest.mark.skipif(HAS_GPU, reason="expectations for a machine without a GPU")


def jiasu_cli(*args, env=None, timeout=300):
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "jiasu", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


def doctor_json(env=None):
    result = jiasu_cli("doctor", "--json", env=env)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_no_command_prints_help_and_exits_2():
    result = jiasu_cli()
    assert result.returncode == 2
    assert "doctor" in result.stderr and "demo" in result.stderr


def test_doctor_json_has_every_section():
    code, facts = doctor_json()
    for key in ("system", "driver", "gpus", "nvrtc", "cudnn", "cublas", "nccl", "cache", "backend",
                "errors", "warnings", "ok"):
        assert key in facts, key
    assert facts["system"]["jiasu"] == jiasu.__version__
    assert code == (0 if facts["ok"] else 1)
    cache = facts["cache"]
    assert cache["dir"] == jiasu._core.cache_dir()
    assert cache["entries"] >= 0 and cache["bytes"] >= 0
    for key in ("driver", "nvrtc", "cudnn", "cublas", "nccl"):
        entry = facts[key]
        if entry["found"]:
            assert entry["path"] and entry["source"]
        else:
            assert entry["error"] and entry["fix"]


def test_doctor_json_finds_nvrtc_with_version():
    if nvrtc_missing():
        pytest.skip("NVRTC is not installed here")
    _, facts = doctor_json()
    assert facts["nvrtc"]["found"] is True
    assert facts["nvrtc"]["version"]
    assert os.path.exists(facts["nvrtc"]["path"])


def test_doctor_json_reports_a_broken_nvrtc_override():
    code, facts = doctor_json(env={"JIASU_NVRTC": "/nonexistent/libnvrtc.so"})
    nvrtc = facts["nvrtc"]
    assert nvrtc["found"] is False
    assert "JIASU_NVRTC" in nvrtc["error"] and "JIASU_NVRTC" in nvrtc["fix"]
    # NVRTC is needed by the CUDA backend; on the CPU backend its absence is only a warning.
    cuda = facts["backend"] == "cuda"
    assert code == (1 if cuda else 0)
    assert any("JIASU_NVRTC" in e["fix"] for e in facts["errors" if cuda else "warnings"])


def test_doctor_text_broken_override_has_fix_line():
    result = jiasu_cli("doctor", env={"JIASU_NVRTC": "/nonexistent/libnvrtc.so", "JIASU_BACKEND": "cpu"})
    assert result.returncode == 0, result.stdout
    assert any(line.startswith("fix:") and "JIASU_NVRTC" in line for line in result.stdout.splitlines())
    assert "\033[" not in result.stdout  # no colours when stdout is not a terminal


def test_doctor_reports_the_host_compiler_and_backend():
    code, facts = doctor_json(env={"JIASU_BACKEND": "cpu"})
    assert facts["backend"] == "cpu"
    compiler = facts["host_compiler"]
    if compiler["found"]:
        assert code == 0 and facts["ok"] is True
        assert os.path.isfile(compiler["path"]) and compiler["identity"]
        assert compiler["threads"] >= 1
    text = jiasu_cli("doctor", env={"JIASU_BACKEND": "cpu"}).stdout
    assert "CPU backend" in text and "active:" in text and "cpu  (JIASU_BACKEND)" in text


def test_doctor_without_a_compiler_on_the_cpu_backend_exits_1():
    code, facts = doctor_json(env={"JIASU_BACKEND": "cpu", "JIASU_CXX": "/nonexistent/c++"})
    assert code == 1 and facts["ok"] is False
    assert facts["host_compiler"]["found"] is False
    assert any("C++ compiler" in e["what"] and "JIASU_CXX" in e["fix"] for e in facts["errors"]), facts["errors"]


@no_gpu
def test_doctor_without_gpu_uses_the_cpu_backend():
    result = jiasu_cli("doctor")
    out = result.stdout
    assert "CUDA driver" in out and "missing" in out
    assert "cpu  (no usable GPU)" in out
    code, facts = doctor_json()
    assert facts["backend"] == "cpu"
    assert facts["gpus"] == []
    assert any("CUDA driver" in w["what"] or "GPU" in w["what"] for w in facts["warnings"]), facts["warnings"]
    if not facts["driver"]["found"]:
        assert facts["driver"]["fix"]
    assert code == (0 if facts["host_compiler"]["found"] else 1)


def test_demo_on_the_cpu_backend():
    result = jiasu_cli("demo", env={"JIASU_BACKEND": "cpu"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CPU backend" in result.stdout
    assert "check:            OK, identical to NumPy's x + y" in result.stdout


def test_demo_nn_trains_on_the_cpu_backend(tmp_path):
    plot = tmp_path / "curves.png"
    result = jiasu_cli("demo", "nn", "--epochs", "2", "--plot", str(plot), env={"JIASU_BACKEND": "cpu"})
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.split() and line.split()[0] in ("1", "2")]
    first, last = float(rows[0][1]), float(rows[1][1])
    assert last < 0.5 * first  # the demo's own criterion, read back from what it printed
    assert "images/s: jiasu" in result.stdout and "OK: the loss fell" in result.stdout
    assert plot.exists() or "--plot needs matplotlib" in result.stdout


@gpu
def test_demo_nn_matches_pytorch_on_the_gpu():
    pytest.importorskip("torch")
    result = jiasu_cli("demo", "nn", "--epochs", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches PyTorch's" in result.stdout and "torch" in result.stdout.split("images/s:")[1]


def test_demo_without_a_compiler_exits_2():
    result = jiasu_cli("demo", env={"JIASU_BACKEND": "cpu", "JIASU_CXX": "/nonexistent/c++"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "JIASU_CXX" in result.stdout
    assert "fix:" in result.stdout  # the doctor's report follows


def test_doctor_text_and_json_agree():
    text, (code, facts) = jiasu_cli("doctor"), doctor_json()
    assert text.returncode == code
    for key in ("nvrtc", "cudnn", "cublas", "nccl"):
        if facts[key]["found"]:
            assert facts[key]["path"] in text.stdout


@gpu
def test_doctor_with_gpu_exits_0_and_names_it():
    result = jiasu_cli("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert jiasu.Device(0).name in result.stdout
    code, facts = doctor_json()
    assert code == 0 and facts["backend"] == "cuda" and facts["ok"] is True
    gpu0 = facts["gpus"][0]
    assert gpu0["name"] == jiasu.Device(0).name
    assert gpu0["multiprocessors"] > 0 and gpu0["memory_bytes"] > 0 and gpu0["free_bytes"] > 0
    assert facts["driver"]["found"] and facts["driver"]["version"]


@gpu
def test_demo_with_gpu_runs_and_times(tmp_path):
    # A fresh cache, so the first call compiles; then a second run loads it from disk.
    env = {"JIASU_CACHE_DIR": str(tmp_path)}
    result = jiasu_cli("demo", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert jiasu.Device(0).name in out
    assert "OK" in out
    assert "compiled with NVRTC" in out
    for label in ("first call:", "NumPy arrays:", "kernel only:", "NumPy on the CPU:"):
        assert label in out
    assert " ms" in out and "µs" in out and "GB/s" in out
    again = jiasu_cli("demo", env=env)
    assert again.returncode == 0 and "loaded from the disk cache" in again.stdout
