# The mgr glue needs ceph-mgr's embedded `ceph_module` (or a test's mock of
# it); the pure modules (space, optimizer, session, ...) import without it.
try:
    import ceph_module  # noqa: F401
except ImportError:
    pass
else:
    from .module import RocksAutotune, RocksAutotuneStandby  # noqa: F401
