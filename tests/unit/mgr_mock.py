"""A mock of ceph-mgr's C++ side (`ceph_module`), as Ceph's own mgr tests do.

Install it before anything imports the real, installed `mgr_module.py`:
the module class under test then runs against Ceph's real Python API with
only the C++ calls answered here (store, options, health, logging).
"""
import sys
import types
from typing import Any, Dict, Optional


class BaseMgrModule:
    def __init__(self, py_modules_ptr: Any = None, this_ptr: Any = None) -> None:
        self.mock_store: Dict[str, str] = {}
        self.mock_options: Dict[str, Any] = {}
        self.mock_health: Dict[str, Any] = {}
        self.mock_remote: list = []
        # the C++ loader adds these standard options to every module's schema
        from mgr_module import Option
        names = [o['name'] for o in type(self).MODULE_OPTIONS]  # type: ignore[attr-defined]
        for opt in (Option('log_level', type='str', default=''),
                    Option('log_to_file', type='bool', default=False),
                    Option('log_to_cluster', type='bool', default=False),
                    Option('log_to_cluster_level', type='str', default='info')):
            if opt['name'] not in names:
                type(self).MODULE_OPTIONS.append(opt)  # type: ignore[attr-defined]

    def _ceph_get_version(self) -> str:
        return '16.2.15'

    def _ceph_get_option(self, key: str) -> Any:
        return {'debug_mgr': '1/5', 'log_file': '/dev/null'}.get(key)

    def _ceph_get_module_option(self, module: str, key: str,
                                localized_prefix: str = '') -> Optional[Any]:
        return self.mock_options.get(key)

    def _ceph_set_module_option(self, module: str, key: str, val: Any) -> None:
        self.mock_options[key] = val

    def _ceph_get_store(self, key: str) -> Optional[str]:
        return self.mock_store.get(key)

    def _ceph_set_store(self, key: str, val: Optional[str]) -> None:
        if val is None:
            self.mock_store.pop(key, None)
        else:
            self.mock_store[key] = val

    def _ceph_set_health_checks(self, checks: Dict[str, Any]) -> None:
        self.mock_health = checks

    def _ceph_log(self, *args: Any) -> None:
        pass

    def _ceph_cluster_log(self, *args: Any) -> None:
        pass

    def _ceph_get_mgr_id(self) -> str:
        return 'x'

    def _ceph_dispatch_remote(self, module: str, method: str, *args: Any, **kw: Any) -> Any:
        self.mock_remote.append((module, method, args, kw))
        return None


class BaseMgrStandbyModule:
    def __init__(self, module_name: str = '', capsule: Any = None) -> None:
        pass


class _Opaque:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def install() -> None:
    if 'ceph_module' in sys.modules:
        return
    m = types.ModuleType('ceph_module')
    m.BaseMgrModule = BaseMgrModule  # type: ignore[attr-defined]
    m.BaseMgrStandbyModule = BaseMgrStandbyModule  # type: ignore[attr-defined]
    m.BasePyOSDMap = _Opaque  # type: ignore[attr-defined]
    m.BasePyOSDMapIncremental = _Opaque  # type: ignore[attr-defined]
    m.BasePyCRUSH = _Opaque  # type: ignore[attr-defined]
    sys.modules['ceph_module'] = m


def make_module() -> Any:
    """The rocks_autotune module on the mock, over a fake cluster and clock."""
    install()
    from fake_cluster import FakeClock, FakeCluster
    from rocks_autotune import module
    m = module.RocksAutotune('rocks_autotune', None, None)
    m.cluster = FakeCluster(FakeClock())
    m.clock = m.cluster.clock
    m.mock_options.update(warmup=1, restart_timeout=30)
    return m
