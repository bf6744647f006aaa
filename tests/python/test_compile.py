"""jiasu.compile_cuda with the real NVRTC (no GPU needed), and the on-disk compile cache."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import jiasu

try:
    NVRTC = jiasu._core.library_info("nvrtc")
except jiasu.LibraryNotFoundError as error:  # pragma: no cover - depends on the machine
    pytest.skip(f"NVRTC is not installed: {error}", allow_module_level=True)

VECTOR_ADD = "\n".join([
    'extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {',
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "  if (i < n) out[i] = x[i] + y[i];",
    "}",
    "",
])

SCALED = "\n".join([
    "#ifndef SCALE",
    "#define SCALE 1",
    "#endif",
    'extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= SCALE; }',
    "",
])

# Line 3 has the error.
BROKEN = "\n".join([
    'extern "C" __global__ void broken(float* x) {',
    "  int i = threadIdx.x;",
    "  x[i] = 1.0f +;",
    "}",
    "",
])

ELF_MAGIC = b"\x7fELF"


def is_ptx(image):
    return isinstance(image, bytes) and b".version" in image and not image.startswith(ELF_MAGIC)


# ---------------------------------------------------------------------------------------------
# Library information


def test_library_info():
    assert set(NVRTC) >= {"path", "source", "version"}
    assert NVRTC["version"].split(".")[0] in ("12", "13"), NVRTC
    assert pathlib.Path(NVRTC["path"]).name.startswith("libnvrtc"), NVRTC
    assert pathlib.Path(NVRTC["path"]).exists(), NVRTC
    assert NVRTC["source"], NVRTC


def test_unknown_library_name():
    with pytest.raises(ValueError, match="unknown CUDA library 'banana'"):
        jiasu._core.library_info("banana")


# ---------------------------------------------------------------------------------------------
# Targets and outputs


def test_ptx_for_compute_arch():
    ptx = jiasu.compile_cuda(VECTOR_ADD, arch="compute_90")
    assert is_ptx(ptx)
    text = ptx.decode("ascii")
    assert ".target sm_90" in text
    assert ".entry add" in text
    assert not ptx.endswith(b"\0"), "PTX is returned without NVRTC's trailing NUL"


def test_cubin_for_sm_arch():
    cubin = jiasu.compile_cuda(VECTOR_ADD, arch="sm_90")
    assert cubin.startswith(ELF_MAGIC)
    assert b"add" in cubin  # the symbol table names the kernel


def test_integer_arch_with_output():
    ptx = jiasu.compile_cuda(VECTOR_ADD, arch=90, output="ptx")
    assert is_ptx(ptx)
    assert b".target sm_90" in ptx
    assert jiasu.compile_cuda(VECTOR_ADD, arch=90, output="cubin").startswith(ELF_MAGIC)
    # output overrides what the arch spelling implies.
    assert jiasu.compile_cuda(VECTOR_ADD, arch="compute_90", output="cubin").startswith(ELF_MAGIC)
    assert is_ptx(jiasu.compile_cuda(VECTOR_ADD, arch="sm_90", output="ptx"))


def test_other_arch():
    ptx = jiasu.compile_cuda(VECTOR_ADD, arch="compute_80")
    assert b".target sm_80" in ptx
    assert b".target sm_90" not in ptx


def test_options_change_the_output():
    plain = jiasu.compile_cuda(SCALED, arch="compute_90")
    scaled = jiasu.compile_cuda(SCALED, arch="compute_90", options=["-DSCALE=3"])
    assert b".entry scale" in plain and b".entry scale" in scaled
    assert plain != scaled
    assert b"0f40400000" in scaled  # 3.0f as PTX writes a float constant
    assert b"0f40400000" not in plain
    # A tuple works as well as a list, and the same options give the same output.
    assert jiasu.compile_cuda(SCALED, arch="compute_90", options=("-DSCALE=3",)) == scaled


def test_cuda_headers_are_found():
    source = "\n".join([
        "#include <cuda_fp16.h>",
        'extern "C" __global__ void half_add(__half* x) { x[threadIdx.x] = __hadd(x[threadIdx.x], x[0]); }',
        "",
    ])
    assert b".entry half_add" in jiasu.compile_cuda(source, arch="compute_90")


# ---------------------------------------------------------------------------------------------
# Errors


def test_syntax_error_raises_nvrtc_error_with_line_and_file():
    with pytest.raises(jiasu.NvrtcError) as excinfo:
        jiasu.compile_cuda(BROKEN, arch="compute_90", name="my_kernel.cu")
    error = excinfo.value
    assert isinstance(error, jiasu.JiasuError)
    assert isinstance(error.log, str)
    for text in (str(error), error.log):
        assert "(3): error" in text, text
        assert "my_kernel.cu" in text, text
    assert "my_kernel.cu(3): error" in error.log


def test_error_uses_default_file_name():
    with pytest.raises(jiasu.NvrtcError) as excinfo:
        jiasu.compile_cuda(BROKEN, arch="compute_90")
    assert "jiasu_module.cu(3): error" in excinfo.value.log


@pytest.mark.parametrize("arch", ["sm_12", "compute_12", 12])
def test_unsupported_arch_lists_supported(arch):
    with pytest.raises(ValueError) as excinfo:
        jiasu.compile_cuda(VECTOR_ADD, arch=arch)
    message = str(excinfo.value)
    assert "arch 12 is not supported" in message
    assert "supported" in message and "90" in message, message


@pytest.mark.parametrize("arch", ["banana", "sm_", "compute_", "90", "sm_90x", "sm_ 90", "compute_9 0"])
def test_malformed_arch(arch):
    with pytest.raises(ValueError, match="arch must look like"):
        jiasu.compile_cuda(VECTOR_ADD, arch=arch)


@pytest.mark.skipif(jiasu.is_available(), reason="a GPU is present")
def test_no_arch_without_gpu_says_to_pass_one():
    with pytest.raises(ValueError, match="pass arch="):
        jiasu.compile_cuda(VECTOR_ADD)


def test_bad_output():
    with pytest.raises(ValueError, match="output must be 'ptx' or 'cubin'"):
        jiasu.compile_cuda(VECTOR_ADD, arch=90, output="elf")


def test_arch_option_is_refused():
    with pytest.raises(ValueError, match="-arch=sm_80"):
        jiasu.compile_cuda(VECTOR_ADD, arch=90, options=["-arch=sm_80"])


# ---------------------------------------------------------------------------------------------
# In subprocesses: the disk cache (its folder is fixed at the first compile) and library overrides

CACHE_SCRIPT = textwrap.dedent("""
    import json, os, sys, jiasu
    source, nonce = sys.argv[1], sys.argv[2]
    ptx = jiasu.compile_cuda(source, arch="compute_90", options=["-DJIASU_TEST_NONCE=" + nonce])
    print(json.dumps({"cache_dir": jiasu._core.cache_dir(), "ptx": ptx.decode("ascii")}))
""")


def compile_in_subprocess(nonce, env=None):
    result = subprocess.run([sys.executable, "-c", CACHE_SCRIPT, VECTOR_ADD, nonce], env=env or dict(os.environ),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def cache_entries(cache):
    return sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.startswith(".tmp-"))


def test_tmp_cache_fixture(tmp_cache):
    assert os.environ["JIASU_CACHE_DIR"] == str(tmp_cache)
    assert tmp_cache.is_dir() and not any(tmp_cache.iterdir())


def test_cache_is_written_and_reused_across_processes(tmp_cache):
    first = compile_in_subprocess("reuse")
    assert first["cache_dir"] == str(tmp_cache)
    assert ".entry add" in first["ptx"]
    entries = cache_entries(tmp_cache)
    assert len(entries) == 1, entries
    entry = entries[0]
    # <dir>/<first 2 chars of key>/<key>
    assert entry.parent.parent == tmp_cache and entry.name.startswith(entry.parent.name)
    before = entry.stat()
    contents = entry.read_bytes()
    assert first["ptx"].encode() in contents

    second = compile_in_subprocess("reuse")
    assert second["ptx"] == first["ptx"]
    assert cache_entries(tmp_cache) == entries
    after = entry.stat()
    # A recompile would have renamed a new file into place (new inode, new mtime).
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert entry.read_bytes() == contents

    # Different options are a different entry.
    third = compile_in_subprocess("other")
    assert ".entry add" in third["ptx"]
    assert len(cache_entries(tmp_cache)) == 2


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupted_cache_entry_is_rebuilt(tmp_cache, damage):
    first = compile_in_subprocess("corrupt")
    [entry] = cache_entries(tmp_cache)
    good = entry.read_bytes()
    if damage == "flip":  # same size, a few payload bytes changed
        bad = bytearray(good)
        for i in range(len(bad) - 40, len(bad) - 20):
            bad[i] ^= 0x5A
        bad = bytes(bad)
    elif damage == "truncate":
        bad = good[: len(good) // 2]
    else:
        bad = b"not a cache entry at all"
    assert bad != good
    entry.write_bytes(bad)

    second = compile_in_subprocess("corrupt")
    assert second["ptx"] == first["ptx"]
    assert ".entry add" in second["ptx"] and ".target sm_90" in second["ptx"]
    assert cache_entries(tmp_cache) == [entry]
    # Rewritten: the damaged bytes are gone (the inode number may be reused, so compare contents).
    assert entry.read_bytes() == good, "the damaged entry was not rewritten"


def test_nvrtc_override_that_does_not_exist():
    code = textwrap.dedent("""
        import jiasu
        try:
            jiasu.compile_cuda("extern \\"C\\" __global__ void k() {}", arch="compute_90")
        except jiasu.LibraryNotFoundError as e:
            print("LibraryNotFoundError |", str(e).replace("\\n", " "))
        except Exception as e:
            print(type(e).__name__, "|", e)
        else:
            print("NO ERROR")
        try:
            jiasu._core.library_info("nvrtc")
        except jiasu.LibraryNotFoundError as e:
            print("LibraryNotFoundError |", str(e).replace("\\n", " "))
    """)
    env = dict(os.environ, JIASU_NVRTC="/nonexistent")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2, result.stdout
    for line in lines:
        kind, _, message = line.partition(" | ")
        assert kind == "LibraryNotFoundError", line
        assert "JIASU_NVRTC" in message and "/nonexistent" in message, line


def test_nvrtc_override_to_the_real_library():
    code = "import json, jiasu; print(json.dumps(jiasu._core.library_info('nvrtc')))"
    env = dict(os.environ, JIASU_NVRTC=NVRTC["path"])
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout.strip().splitlines()[-1])
    assert info["source"] == "JIASU_NVRTC"
    assert info["version"] == NVRTC["version"]
