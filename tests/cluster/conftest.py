"""A real lab cluster for the cluster tier: brought up once, torn down at the end."""
import json
import os
import subprocess
import time
from typing import Any, Callable, Dict, Iterator, List

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
LAB_CMD = os.path.join(REPO, 'qa', 'lab', 'ceph-lab')


class Lab:
    def __init__(self) -> None:
        self.dir = os.environ.get('CEPH_LAB_DIR', '/var/tmp/rocks-autotune-lab')
        # a chroot release's CLI: the wrappers `ceph-lab up` writes in the lab's bin
        self.env = dict(os.environ, CEPH_CONF=os.path.join(self.dir, 'ceph.conf'),
                        PATH=os.path.join(self.dir, 'bin') + os.pathsep + os.environ['PATH'])

    def run(self, *args: str, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess:
        p = subprocess.run(list(args), env=self.env, text=True, capture_output=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f'{" ".join(args)} -> {p.returncode}\n{p.stdout}{p.stderr}')
        return p

    def ceph(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run('ceph', '--connect-timeout', '30', *args, check=check)

    def json(self, *args: str) -> Any:
        return json.loads(self.ceph(*args, '-f', 'json').stdout)

    def osd(self, osd: int) -> Dict[str, Any]:
        return [o for o in self.json('osd', 'dump')['osds'] if o['osd'] == osd][0]

    def pid(self, name: str) -> int:
        with open(os.path.join(self.dir, 'run', f'{name}.pid')) as f:
            return int(f.read())

    def active_clean(self) -> bool:
        s = self.json('pg', 'stat')
        s = s.get('pg_summary', s)
        clean = sum(x['num'] for x in s['num_pg_by_state'] if x['name'] == 'active+clean')
        return clean == s['num_pgs'] > 0

    def own_config(self, who: str) -> List[Dict[str, Any]]:
        return [e for e in self.json('config', 'dump') if e['section'] == who]

    def wait(self, what: str, pred: Callable[[], bool], timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while not pred():
            if time.time() > deadline:
                raise AssertionError(f'timed out after {timeout}s waiting for {what}')
            time.sleep(2)

    def status(self) -> Dict[str, Any]:
        return self.json('rocks-autotune', 'status')


@pytest.fixture(scope='session')
def lab() -> Iterator[Lab]:
    lab = Lab()
    mgrs = os.environ.get('CEPH_LAB_MGRS', '1')
    up = subprocess.run([LAB_CMD, 'up', '--mgrs', mgrs], env=lab.env, text=True,
                        capture_output=True)
    assert up.returncode == 0, f'ceph-lab up failed:\n{up.stdout}{up.stderr}'
    # short trials: the tests check behaviour, not figures
    for name, value in (('warmup', '2'), ('bench_chunk_seconds', '2'),
                        ('max_window_factor', '1.5'), ('restart_timeout', '120')):
        lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{name}', value)
    lab.wait('HEALTH_OK', lambda: lab.json('health')['status'] == 'HEALTH_OK', 120)
    yield lab
    if os.environ.get('CEPH_LAB_KEEP') != '1':
        subprocess.run([LAB_CMD, 'down'], env=lab.env)
