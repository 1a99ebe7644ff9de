import os

if 'UNITTEST' in os.environ:
    import tests  # noqa: F401  (mocks ceph_module before mgr_module is imported)

from .module import RocksAutotune  # noqa: F401,E402
