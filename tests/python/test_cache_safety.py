"""The compile cache and the host compiler's temporary folders under damage, tampering and failure: an entry of
another key, a FIFO or a symbolic link in place of an entry, an entry of the older layout, a temporary folder that
cannot be written, and the folders a crashed process leaves behind. Each case runs the CPU backend in fresh
processes (the cache and the temporary folder are fixed per process) and checks the numbers against NumPy."""
import errno
import fcntl
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# A Python kernel in its own file (kernels are read from source), run for one dtype; prints the result as JSON.
# With "crash" it kills itself after the launch, as a crash would; with "wait" it keeps running until its stdin
# closes, then launches once more (its temporary folder must still be there).
PROGRAM = textwrap.dedent("""
    import json, os, signal, sys
    import numpy as np
    import jiasu

    @jiasu.kernel
    def affine(x, out):
        i = jiasu.grid(1)
        if i < out.size:
            out[i] = 3 * x[i] + 7

    jiasu.set_backend("cpu")
    dtype = np.dtype(sys.argv[1])
    x = (np.arange(64) * 1.25).astype(dtype)
    out = np.zeros_like(x)
    affine[2, 32](x, out)
    print(json.dumps(out.tolist()), flush=True)
    if sys.argv[2:] == ["crash"]:
        os.kill(os.getpid(), signal.SIGKILL)
    if sys.argv[2:] == ["wait"]:
        sys.stdin.read()
        affine[2, 32](x, out)
        print(json.dumps(out.tolist()), flush=True)
""")

# The C++ compiler, through a wrapper that counts the builds (not `--version`): an independent witness of
# whether a process compiled or loaded from the cache. Its `--version` is g++'s, so the cache key is the same.
COUNTING_COMPILER = textwrap.dedent("""\
    #!/bin/sh
    [ "$1" = --version ] || echo build >> "$JIASU_TEST_BUILD_LOG"
    exec "$JIASU_TEST_REAL_CXX" "$@"
""")


def expected(dtype):
    x = (np.arange(64) * 1.25).astype(dtype)
    return (3 * x.astype(np.float64) + 7).astype(dtype)


class Workspace:
    """A cache folder, a temporary folder (TMPDIR) and the kernel program, all private to one test."""

    def __init__(self, root):
        self.cache = root / "cache"
        self.tmp = root / "tmp"
        self.cache.mkdir()
        self.tmp.mkdir()
        self.program = root / "affine.py"
        self.program.write_text(PROGRAM)
        self.build_log = root / "builds.log"
        compiler = shutil.which("g++")
        if compiler is None:
            pytest.skip("no g++ on PATH")
        self.compiler = root / "counting-g++"
        self.compiler.write_text(COUNTING_COMPILER)
        self.compiler.chmod(0o755)
        self.env = dict(os.environ, JIASU_CACHE_DIR=str(self.cache), TMPDIR=str(self.tmp),
                        JIASU_CXX=str(self.compiler), JIASU_TEST_REAL_CXX=compiler,
                        JIASU_TEST_BUILD_LOG=str(self.build_log))

    def builds(self):
        return len(self.build_log.read_text().splitlines()) if self.build_log.exists() else 0

    def start(self, dtype, *args, preexec_fn=None, **env):
        return subprocess.Popen([sys.executable, str(self.program), dtype, *args], env=dict(self.env, **env),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=preexec_fn)

    def run(self, dtype, *args, timeout=120, **kwargs):
        """Runs the program to its end (a hang fails the test at the timeout); returns (returncode, stdout, stderr)."""
        process = self.start(dtype, *args, **kwargs)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"the program was still running after {timeout} s")
        return process.returncode, out, err

    def result(self, dtype, **kwargs):
        returncode, out, err = self.run(dtype, **kwargs)
        assert returncode == 0, err
        return np.array(json.loads(out.splitlines()[0]), dtype=dtype)

    def entries(self):
        return sorted(p for p in self.cache.rglob("*") if not p.is_dir() and not p.name.startswith(".tmp-"))

    def host_dirs(self):
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("jiasu-host-"))


@pytest.fixture
def space(tmp_path):
    return Workspace(tmp_path)


def entry_for(space, dtype):
    """Builds the kernel for dtype into the (otherwise unchanged) cache; returns the new entry's path."""
    before = set(space.entries())
    np.testing.assert_array_equal(space.result(dtype), expected(dtype))
    [entry] = set(space.entries()) - before
    return entry


def test_entry_copied_over_another_keys_entry_is_rebuilt(space):
    float32_entry = entry_for(space, "float32")
    float64_entry = entry_for(space, "float64")
    assert space.builds() == 2
    shutil.copyfile(float32_entry, float64_entry)  # same symbol name, wrong element type

    np.testing.assert_array_equal(space.result("float64"), expected("float64"))
    assert space.builds() == 3  # refused and rebuilt, not loaded
    np.testing.assert_array_equal(space.result("float64"), expected("float64"))
    np.testing.assert_array_equal(space.result("float32"), expected("float32"))
    assert space.builds() == 3  # both entries good again


def test_fifo_in_place_of_an_entry_does_not_block(space):
    entry = entry_for(space, "float64")
    entry.unlink()
    os.mkfifo(entry)
    np.testing.assert_array_equal(space.result("float64", timeout=60), expected("float64"))
    assert entry.is_file() and not entry.is_symlink()
    assert space.builds() == 2


def limit_memory():
    # Enough for the interpreter, NumPy, two worker threads and the compiler; far less than reading /dev/zero to
    # the end (which then fails instead of exhausting the machine).
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_symlink_to_dev_zero_in_place_of_an_entry_is_not_read(space):
    entry = entry_for(space, "float64")
    entry.unlink()
    entry.symlink_to("/dev/zero")
    np.testing.assert_array_equal(space.result("float64", preexec_fn=limit_memory, JIASU_CPU_THREADS="2"), expected("float64"))
    assert entry.is_file() and not entry.is_symlink()
    assert space.builds() == 2


def test_symlink_to_a_good_entry_is_not_followed(space):
    entry = entry_for(space, "float64")
    kept = space.cache / "kept-elsewhere"
    entry.rename(kept)
    entry.symlink_to(kept)
    np.testing.assert_array_equal(space.result("float64"), expected("float64"))
    assert not entry.is_symlink() and space.builds() == 2


def test_entry_of_the_older_layout_is_a_miss_and_is_rebuilt(space):
    entry = entry_for(space, "float64")
    data = entry.read_bytes()
    # Today's layout: magic, key size (u64 LE), key, payload size (u64 LE), SHA-256(payload), payload.
    magic = b"JIASU-CACHE-2\n"
    assert data.startswith(magic)
    (key_size,) = struct.unpack_from("<Q", data, len(magic))
    key_end = len(magic) + 8 + key_size
    assert data[len(magic) + 8:key_end].decode() == entry.name
    (payload_size,) = struct.unpack_from("<Q", data, key_end)
    digest, payload = data[key_end + 8:key_end + 40], data[key_end + 40:]
    assert len(payload) == payload_size
    # The layout before it: magic, payload size, SHA-256(payload), payload.
    entry.write_bytes(b"JIASU-CACHE-1\n" + struct.pack("<Q", payload_size) + digest + payload)

    np.testing.assert_array_equal(space.result("float64"), expected("float64"))
    assert space.builds() == 2
    assert entry.read_bytes().startswith(magic)


def test_eight_processes_share_one_cache(space):
    processes = [space.start("float64" if i % 2 else "float32") for i in range(8)]
    for i, process in enumerate(processes):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        dtype = "float64" if i % 2 else "float32"
        np.testing.assert_array_equal(np.array(json.loads(out.splitlines()[0]), dtype=dtype), expected(dtype))
    assert len(space.entries()) == 2
    builds = space.builds()
    for dtype in ("float32", "float64"):
        np.testing.assert_array_equal(space.result(dtype), expected(dtype))
    assert space.builds() == builds  # every entry written concurrently is whole and loads
    assert space.host_dirs() == []


def no_file_can_grow():
    # As on a full disk, every write to a file fails (EFBIG, as the signal is ignored); pipes still work.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_a_temporary_folder_that_cannot_be_written_is_named(space):
    returncode, _, err = space.run("float64", preexec_fn=no_file_can_grow)
    assert returncode != 0
    assert "no C++ compiler found" not in err, err
    assert "could not write the source to " + str(space.tmp) + "/jiasu-host-" in err, err
    assert os.strerror(errno.EFBIG) in err, err  # "File too large"
    assert "TMPDIR" in err, err


def test_a_temporary_folder_that_does_not_exist_is_named(space):
    missing = space.tmp / "missing"
    returncode, _, err = space.run("float64", TMPDIR=str(missing))
    assert returncode != 0
    assert "no C++ compiler found" not in err, err
    assert f"could not create a temporary folder in {missing}: {os.strerror(errno.ENOENT)}" in err, err
    assert "TMPDIR" in err, err


def gone_pid():
    """The pid of a process that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_crashed_process_folder_is_removed_by_the_next_process(space):
    returncode, out, _ = space.run("float64", "crash")
    assert returncode == -signal.SIGKILL
    np.testing.assert_array_equal(np.array(json.loads(out.splitlines()[0])), expected("float64"))
    [left] = space.host_dirs()  # the crash left its folder
    np.testing.assert_array_equal(space.result("float64"), expected("float64"))
    assert space.host_dirs() == [], f"{left} was not removed"


def test_a_live_process_folder_is_kept(space):
    waiting = space.start("float64", "wait")
    first = json.loads(waiting.stdout.readline())
    np.testing.assert_array_equal(np.array(first), expected("float64"))
    [live] = space.host_dirs()
    # Folders of gone processes that look stale but are not: locked by a live process (as one in another PID
    # namespace would be), without a lock file (made by another program), or owned by another user.
    locked = space.tmp / f"jiasu-host-{gone_pid()}-Locked"
    locked.mkdir()
    lock_file = open(locked / ".lock", "w")
    fcntl.flock(lock_file, fcntl.LOCK_EX)
    unlocked_foreign = space.tmp / f"jiasu-host-{gone_pid()}-NoLock"
    unlocked_foreign.mkdir()
    keep = {live, locked.name, unlocked_foreign.name}
    if os.geteuid() == 0:
        foreign = space.tmp / f"jiasu-host-{gone_pid()}-Others"
        foreign.mkdir()
        (foreign / ".lock").touch()
        os.chown(foreign / ".lock", 65534, 65534)
        os.chown(foreign, 65534, 65534)
        keep.add(foreign.name)

    np.testing.assert_array_equal(space.result("float32"), expected("float32"))
    assert set(space.host_dirs()) == keep

    out, err = waiting.communicate("", timeout=120)  # its folder is still usable
    assert waiting.returncode == 0, err
    np.testing.assert_array_equal(np.array(json.loads(out.splitlines()[0])), expected("float64"))
    assert set(space.host_dirs()) == keep - {live}

    lock_file.close()  # the lock's holder is gone now: the folder is stale
    np.testing.assert_array_equal(space.result("float32"), expected("float32"))
    assert locked.name not in space.host_dirs()
