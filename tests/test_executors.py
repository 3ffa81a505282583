"""The local executor's worker processes (fedlib.repro.run.executors): a worker ends with the process that
started it."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_grid_worker_ends_with_the_process_that_started_it(tmp_path):
    """A notebook kernel killed mid-grid left its two workers training, orphaned, for an hour (FedABC's paper
    retrain, 2026-11-29).  A worker of the local executor now ends when its parent does."""
    import signal
    import subprocess
    import time

    pidfile = tmp_path / "worker.pid"
    script = (
        "import concurrent.futures as cf, multiprocessing as mp, os, time, sys\n"
        "from fedlib.repro.run.executors import _worker_init\n"
        "def work(path):\n"
        "    open(path, 'w').write(str(os.getpid())); time.sleep(120)\n"
        "if __name__ == '__main__':\n"
        "    pool = cf.ProcessPoolExecutor(1, mp_context=mp.get_context('spawn'), initializer=_worker_init)\n"
        f"    pool.submit(work, {str(pidfile)!r}); time.sleep(120)\n")
    (tmp_path / "parent.py").write_text(script)  # a file: spawn imports the worker's function from it
    parent = subprocess.Popen([sys.executable, str(tmp_path / "parent.py")], cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        for _ in range(900):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.1)
        worker = int(pidfile.read_text())
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        for _ in range(100):
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.kill(worker, signal.SIGKILL)
            pytest.fail("the worker outlived its parent by 10 s")
    finally:
        parent.kill()
