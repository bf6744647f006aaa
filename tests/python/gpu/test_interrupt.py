"""Ctrl-C ends a wait for the GPU with KeyboardInterrupt (the kernel goes on running); the kernel can then be
let go and the process goes on using the GPU."""
import signal
import subprocess
import sys
import textwrap
import time

import pytest


CHILD = """
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even where the test runs with SIGINT ignored
    import sys
    import numpy as np
    import jiasu

    @jiasu.kernel
    def spin(flag, out):
        while jiasu.atomic.add(flag, 0, 0) == 0:
            pass
        out[0] = 7

    work = jiasu.Stream(non_blocking=True)
    side = jiasu.Stream(non_blocking=True)
    flag = jiasu.zeros(1, dtype=np.int32)
    out = jiasu.zeros(1, dtype=np.int32)
    spin[1, 1, work](jiasu.ones(1, dtype=np.int32), out)   # compiled, ends at once
    work.synchronize()
    spin[1, 1, work](flag, out)                            # spins until flag is set
    print("ready", flush=True)
    try:
        if sys.argv[1] == "synchronize":
            work.synchronize()
        else:
            work.record().synchronize()
        print("not interrupted", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    flag.set(np.ones(1, dtype=np.int32), stream=side)      # lets the kernel end
    side.synchronize()
    work.synchronize()
    print("result", int(out.get()[0]), flush=True)
"""


@pytest.mark.parametrize("wait", ["synchronize", "event"])
def test_ctrl_c_ends_a_wait_for_the_gpu(tmp_path, wait):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    child = subprocess.Popen([sys.executable, str(script), wait], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)  # a hang guard, not a timing
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert out.split() == ["interrupted", "result", "7"], (out, err)
