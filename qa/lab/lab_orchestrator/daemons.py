"""Start, stop and find the lab's daemons by the pids in their pid files.

Shared by qa/lab/ceph-lab and the lab orchestrator backend so that both
manage processes the same way.  Standard library only.
"""
import os
import signal
import subprocess
import tempfile
import time
from typing import List, Optional

DAEMON_TYPES = ('mon', 'mgr', 'osd')
# what systemd gives a unit: ceph-mgr's embedded Python finds its prefix by
# looking for python3 on PATH, so a venv's or pyenv's python3 there (tox, a
# developer's shell) would hide the system's site-packages (skopt) from it
SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'


def _alive(pid: int) -> bool:
    """True while any thread of the process runs (and may hold its locks).

    The main thread of an exiting daemon turns zombie while its other
    threads still shut down, holding the pid file and store locks.
    """
    try:
        with open(f'/proc/{pid}/stat') as f:
            zombie = f.read().rsplit(')', 1)[1].split()[0] == 'Z'
        return not zombie or len(os.listdir(f'/proc/{pid}/task')) > 1
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class LabDaemons:
    def __init__(self, lab_dir: str) -> None:
        self.lab_dir = lab_dir
        self.conf = os.path.join(lab_dir, 'ceph.conf')

    def pid_file(self, name: str) -> str:
        return os.path.join(self.lab_dir, 'run', f'{name}.pid')

    def names(self) -> List[str]:
        """Every daemon that has a data directory in the lab."""
        found = []
        for entry in sorted(os.listdir(self.lab_dir)):
            typ, _, ident = entry.partition('.')
            if typ in DAEMON_TYPES and ident and os.path.isdir(os.path.join(self.lab_dir, entry)):
                found.append(entry)
        return found

    def pid(self, name: str) -> Optional[int]:
        """The pid of a running daemon, from its pid file; None if not running."""
        try:
            with open(self.pid_file(name)) as f:
                pid = int(f.read().strip())
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmd = f.read().split(b'\0')
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return None
        # a recycled pid is not our daemon
        typ, _, ident = name.partition('.')
        if (not _alive(pid) or not cmd[0].endswith(f'ceph-{typ}'.encode())
                or ident.encode() not in cmd):
            return None
        return pid

    def start(self, name: str, timeout: float = 60) -> int:
        pid = self.pid(name)
        if pid:
            return pid
        typ, _, ident = name.partition('.')
        # the daemon forks into the background and writes its pid file.  cwd /
        # as under systemd: Debian sid's Tentacle has a relative osd_class_dir
        # (lib/x86_64-linux-gnu/rados-classes), which only resolves from /
        # stderr to a file, not a pipe: the daemon may hold it open after its parent
        # exits; what it said is the only trace of a failure once the lab is gone
        with tempfile.TemporaryFile('w+') as err:
            p = subprocess.run([f'ceph-{typ}', '-i', ident, '-c', self.conf], cwd='/',
                               env=dict(os.environ, PATH=SYSTEM_PATH), timeout=timeout,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=err, start_new_session=True)
            if p.returncode != 0:
                err.seek(0)
                raise RuntimeError(f'{name} failed to start (exit {p.returncode}): '
                                   f'{err.read().strip()[-2000:]}; '
                                   f'see {self.lab_dir}/log/{name}.log')
        deadline = time.time() + 10
        while time.time() < deadline:
            pid = self.pid(name)
            if pid:
                return pid
            time.sleep(0.1)
        raise RuntimeError(f'{name} did not start; see {self.lab_dir}/log/{name}.log')

    def stop(self, name: str, timeout: float = 30) -> None:
        pid = self.pid(name)
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        # the daemon drops its pid file before it exits and releases its
        # store's lock: wait for the process itself
        deadline = time.time() + timeout
        while time.time() < deadline and _alive(pid):
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)

    def restart(self, name: str, pause: float = 0.0) -> int:
        self.stop(name)
        time.sleep(pause)  # a test hook: a window in which the caller may go away
        return self.start(name)
