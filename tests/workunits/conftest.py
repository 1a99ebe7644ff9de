"""A lab of its own for the workunits: brought up once, torn down at the end.

Reuses the cluster tier's `Lab` helper (tests/cluster/conftest.py), loaded by
path so that the two conftest modules do not shadow each other.
"""
import importlib.util
import os
import subprocess
from typing import Any, Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'cluster_conftest', os.path.join(HERE, '..', 'cluster', 'conftest.py'))
_cluster = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_cluster)  # type: ignore[union-attr]
Lab: Any = _cluster.Lab
LAB_CMD: str = _cluster.LAB_CMD
REPO: str = _cluster.REPO


@pytest.fixture(scope='session')
def lab() -> Iterator[Any]:
    lab = Lab()
    up = subprocess.run([LAB_CMD, 'up'], env=lab.env, text=True, capture_output=True)
    assert up.returncode == 0, f'ceph-lab up failed:\n{up.stdout}{up.stderr}'
    lab.wait('HEALTH_OK', lambda: lab.json('health')['status'] == 'HEALTH_OK', 180)
    yield lab
    if os.environ.get('CEPH_LAB_KEEP') != '1':
        subprocess.run([LAB_CMD, 'down'], env=lab.env)
