"""A lab of its own for the workunits: brought up once, torn down at the end.

Takes it as the cluster tier does (`own_lab` in tests/cluster/conftest.py),
loaded by path so that the two conftest modules do not shadow each other.
"""
import importlib.util
import os
from typing import Any, Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'cluster_conftest', os.path.join(HERE, '..', 'cluster', 'conftest.py'))
_cluster = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_cluster)  # type: ignore[union-attr]


@pytest.fixture(scope='session')
def lab() -> Iterator[Any]:
    with _cluster.own_lab() as lab:
        lab.wait('HEALTH_OK', lambda: lab.json('health')['status'] == 'HEALTH_OK', 180)
        yield lab
