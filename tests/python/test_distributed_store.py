"""The rendezvous of jiasu.distributed without a GPU: TCPStore between processes, found from torchrun's variables,
and `python -m jiasu.launch`, which starts the ranks with those variables and stops them all when one fails."""
import datetime
import os
import re
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import jiasu
from jiasu.distributed import TCPStore
from jiasu.distributed._store import store_from_environment


def test_values_waits_and_counters():
    with TCPStore("127.0.0.1", 0, world_size=2, is_master=True, timeout=5) as master:
        assert master.is_master and master.world_size == 2 and master.port > 0 and master.timeout == 5
        peer = TCPStore("localhost", master.port, timeout=datetime.timedelta(seconds=5))
        assert not peer.is_master and peer.world_size is None and peer.timeout == 5
        master.set("id", bytes(range(256)))
        assert peer.get("id") == bytes(range(256))
        peer.set("text", "加速")
        assert master.get("text") == "加速".encode()
        assert [peer.add("n", 3), master.add("n", -1)] == [3, 2]
        assert peer.check(["id", "n"]) and not peer.check(["id", "missing"])
        threading.Timer(0.3, lambda: master.set("late", b"x")).start()
        start = time.monotonic()
        assert peer.get("late") == b"x" and time.monotonic() - start >= 0.25
        assert peer.delete_key("late") and not peer.delete_key("late")
        peer.close()


def test_timeouts_are_timeout_errors_naming_what_is_missing():
    with TCPStore("127.0.0.1", 0, world_size=3, is_master=True, timeout=0.5) as store:
        start = time.monotonic()
        with pytest.raises(jiasu.DistributedTimeoutError, match="no key 'never'"):
            store.get("never")
        assert 0.4 < time.monotonic() - start < 3
        with pytest.raises(TimeoutError, match="still lacks 'a', 'b'"):
            store.wait(["a", "b"], timeout=0.2)
        with pytest.raises(jiasu.DistributedTimeoutError, match="only 1 of 3 ranks"):
            store.barrier()
    with pytest.raises(jiasu.DistributedTimeoutError, match=r"127\.0\.0\.1:1 .*MASTER_ADDR"):
        TCPStore("127.0.0.1", 1, timeout=0.3)


def test_bad_arguments():
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=5) as store:
        with pytest.raises(TypeError, match="bytes or str, not int"):
            store.set("k", 5)
        with pytest.raises(TypeError):
            store.wait("k")  # a list of keys, not one
        with pytest.raises(ValueError, match="positive number of seconds"):
            store.wait(["k"], timeout=0)
        with pytest.raises(ValueError, match="without a world_size"):
            store.barrier()
        store.set("k", "not a number")
        with pytest.raises(jiasu.DistributedError, match="not an integer"):
            store.add("k", 1)
    with pytest.raises(ValueError, match="this store is closed"):
        store.get("k")
    with pytest.raises(ValueError, match="from 0 to 65535"):
        TCPStore("127.0.0.1", 70000, is_master=True)
    with pytest.raises(ValueError, match="positive number of seconds"):
        TCPStore("127.0.0.1", 0, is_master=True, timeout=-1)
    with pytest.raises(TypeError, match="timedelta, not bool"):
        TCPStore("127.0.0.1", 0, is_master=True, timeout=True)
    with pytest.raises(TypeError, match="timedelta, not str"):
        TCPStore("127.0.0.1", 0, is_master=True, timeout="5")


def test_store_from_environment(monkeypatch):
    monkeypatch.delenv("MASTER_PORT", raising=False)
    with pytest.raises(ValueError, match="MASTER_PORT is not set.*jiasu.launch"):
        store_from_environment(0, 1)
    monkeypatch.setenv("MASTER_PORT", "eighty")
    with pytest.raises(ValueError, match="MASTER_PORT must be a port number"):
        store_from_environment(0, 1)


# A rank of a job: meets the others through the store from the environment, checks what every rank wrote.
RANK_SCRIPT = textwrap.dedent("""
    import os, sys
    from jiasu.distributed._store import store_from_environment
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    assert int(os.environ["LOCAL_RANK"]) == rank and int(os.environ["LOCAL_WORLD_SIZE"]) == world
    store = store_from_environment(rank, world, timeout=float(os.environ.get("STORE_TIMEOUT", "30")))
    store.set(f"rank{rank}", f"{rank * rank}")
    store.barrier("written")
    values = [int(store.get(f"rank{r}")) for r in range(world)]
    assert values == [r * r for r in range(world)], values
    store.add("sum", rank)
    store.barrier("added")
    assert int(store.add("sum", 0)) == world * (world - 1) // 2
    if rank == int(os.environ.get("FAILING_RANK", "-1")):
        sys.exit(3)
    store.barrier("end")   # the others wait here for the failed rank
    os.write(1, f"rank {rank} of {world}: ok\\n".encode())  # one write: the ranks share the pipe
""")


def launch(tmp_path, *options, env=None, timeout=120):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    command = [sys.executable, "-m", "jiasu.launch", *options, str(script)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=dict(os.environ, **(env or {})))


def test_launch_starts_every_rank_with_its_variables(tmp_path):
    result = launch(tmp_path, "--nproc-per-node", "4")
    assert result.returncode == 0, result.stderr
    assert sorted(re.findall(r"rank \d of \d: ok", result.stdout)) == [f"rank {r} of 4: ok" for r in range(4)]


def test_launch_stops_the_job_when_a_rank_fails(tmp_path):
    start = time.monotonic()
    result = launch(tmp_path, "--nproc-per-node", "3", env={"FAILING_RANK": "1", "STORE_TIMEOUT": "300"})
    assert result.returncode == 3, result.stderr
    assert "rank 1 exited with status 3; stopping the others" in result.stderr
    assert "ok" not in result.stdout  # the others were stopped in the barrier, long before its timeout
    assert time.monotonic() - start < 60


def test_a_rank_whose_peer_never_comes_times_out(tmp_path):
    script = tmp_path / "alone.py"
    script.write_text(textwrap.dedent("""
        import jiasu
        from jiasu.distributed._store import store_from_environment
        store = store_from_environment(0, 2, timeout=0.5)  # rank 1 is never started
        try:
            store.barrier()
        except jiasu.DistributedTimeoutError as error:
            print(error)
    """))
    result = subprocess.run([sys.executable, "-m", "jiasu.launch", str(script)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "only 1 of 2 ranks arrived" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("options, message", [
    (["--nproc-per-node", "0"], "expected a positive number"),
    (["--nnodes", "2"], "--master-port is required"),
    (["--nnodes", "2", "--node-rank", "2", "--master-port", "29500"], "--node-rank must be from 0 to 1"),
    (["--master-port", "70000"], "--master-port must be from 1 to 65535"),
])
def test_launch_rejects_bad_options(tmp_path, options, message):
    result = launch(tmp_path, *options)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_launch_runs_a_module_and_passes_its_arguments(tmp_path):
    (tmp_path / "echo_rank.py").write_text(  # one write per line: the ranks share the pipe
        "import os, sys\nos.write(1, ' '.join([os.environ['RANK'], *sys.argv[1:]]).encode() + b'\\n')\n")
    result = subprocess.run([sys.executable, "-m", "jiasu.launch", "--nproc-per-node", "2", "-m", "echo_rank",
                             "a", "--flag"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert sorted(re.findall(r"\d a --flag", result.stdout)) == ["0 a --flag", "1 a --flag"]
