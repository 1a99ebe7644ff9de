"""A mock of ceph-mgr's C++ side (`ceph_module`), as Ceph's own mgr tests do.

Install it before anything imports the real, installed `mgr_module.py`:
the module class under test then runs against Ceph's real Python API with
only the C++ calls answered here (store, options, health, logging).
"""
import errno
import json
import sys
import types
from typing import Any, Dict, List, Optional


# the mon's default mon_config_key_max_entry_size
MON_CONFIG_KEY_MAX_ENTRY_SIZE = 64 << 10


class Log:
    """A logger that keeps its lines, for what is run outside a module (the panel server)."""

    def __init__(self) -> None:
        self.lines: List[str] = []

    def info(self, msg: str, *args: Any) -> None:
        self.lines.append(msg % args)

    error = info

    def exception(self, msg: str, *args: Any) -> None:
        self.lines.append('EXC ' + msg % args)


class BaseMgrModule:
    def __init__(self, py_modules_ptr: Any = None, this_ptr: Any = None) -> None:
        self.mock_store: Dict[str, str] = {}
        self.mock_options: Dict[str, Any] = {}
        self.mock_health: Dict[str, Any] = {}
        self.mock_remote: list = []
        self.mock_store_fails = False  # every write fails, as when the mons lost quorum
        self.mock_store_writes: List[int] = []  # each value the mock mon took, its length (del: 0)
        self.mock_remote_fails = False

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
        # as ActivePyModules::set_store: the cache first, then the mon, whose
        # refusal is only logged
        if val is None:
            self.mock_store.pop(key, None)
        else:
            self.mock_store[key] = val

    def _ceph_send_command(self, result: Any, svc_type: str, svc_id: str, command: str,
                           tag: str, inbuf: Any, *args: Any, **kwargs: Any) -> None:
        # (Tentacle also passes one_shot)
        """The mon's config-key set/del on the module's keys (what the mock mon knows)."""
        cmd = json.loads(command)
        prefix = f'mgr/{self.module_name}/'  # type: ignore[attr-defined]
        if svc_type != 'mon' or cmd['prefix'] not in ('config-key set', 'config-key del') \
                or not cmd['key'].startswith(prefix):
            result.complete(-errno.EINVAL, '', f'mock mon: no {cmd["prefix"]}')
            return
        key = cmd['key'][len(prefix):]
        if self.mock_store_fails:
            result.complete(-errno.ETIMEDOUT, '', 'mock mon: no quorum')
        elif cmd['prefix'] == 'config-key del':
            self.mock_store.pop(key, None)
            self.mock_store_writes.append(0)
            result.complete(0, '', '')
        elif len(cmd['val']) > MON_CONFIG_KEY_MAX_ENTRY_SIZE:
            result.complete(-errno.EFBIG, '', 'error: entry size limited to 65536 bytes.')
        else:
            self.mock_store[key] = cmd['val']
            self.mock_store_writes.append(len(cmd['val']))
            result.complete(0, '', '')

    def _ceph_set_health_checks(self, checks: Dict[str, Any]) -> None:
        self.mock_health = checks

    def _ceph_log(self, *args: Any) -> None:
        pass

    def _ceph_cluster_log(self, *args: Any) -> None:
        pass

    def _ceph_get_mgr_id(self) -> str:
        return 'x'

    def _ceph_dispatch_remote(self, module: str, method: str, *args: Any, **kw: Any) -> Any:
        if self.mock_remote_fails:
            raise ImportError(f'Module not found: {module}')
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


def load_class(cls: Any, name: str = 'rocks_autotune') -> Any:
    """What ceph-mgr's C++ loader does once per module class before it builds one:
    register its options (with the standard log options; Tentacle also fills
    MODULE_OPTION_DEFAULTS here) and its commands."""
    if not cls.__dict__.get('_mock_loaded'):
        cls._register_options(name)
        cls._register_commands(name)
        cls._mock_loaded = True
    return cls


def make_module() -> Any:
    """The rocks_autotune module on the mock, over a fake cluster and clock."""
    install()
    from fake_cluster import FakeClock, FakeCluster
    from rocks_autotune import module
    m = load_class(module.RocksAutotune)('rocks_autotune', None, None)
    m.cluster = FakeCluster(FakeClock())
    m.clock = m.cluster.clock
    m.mock_options.update(warmup=1, restart_timeout=30, baseline_runs=2)
    m.load()  # as serve() does first: commands wait for it
    return m


def drive(m: Any, steps: int = 5000, what: str = 'session') -> None:
    """Step the module's session (or its rollout: what='rollout') to its end
    on the fake clock, publishing after every step as the serve loop does."""
    clock = m.cluster.clock
    for _ in range(steps):
        machine = getattr(m, what)
        if machine is None or not machine.active:
            return
        clock.advance(machine.step())
        m.publish()
    raise AssertionError(f'{what} did not end')
