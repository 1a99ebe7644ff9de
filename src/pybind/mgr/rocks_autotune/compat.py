"""What differs between the Ceph releases the module runs on, in one place.

Pacific .. Squid register CLI commands in one global registry
(`mgr_module.CLIReadCommand`/`CLIWriteCommand`).  Tentacle (20.2) gives each
module a registry of its own: `CLICommandBase.make_registry_subtype(...)`,
named by the module class's `CLICommand` attribute (see Tentacle's
pg_autoscaler/cli.py).  The module uses the names below on every release.
"""
from typing import Any

try:
    from mgr_module import CLICommandBase  # type: ignore[attr-defined]
except ImportError:  # Pacific .. Squid
    from mgr_module import CLICommand as _Global  # type: ignore[attr-defined]
    from mgr_module import CLIReadCommand, CLIWriteCommand  # type: ignore[attr-defined]
    # harmless as a class attribute there: the global registry is what is read
    CLICommand: Any = _Global
else:
    CLICommand = CLICommandBase.make_registry_subtype('RocksAutotuneCLICommand')
    CLIReadCommand = CLICommand.Read
    CLIWriteCommand = CLICommand.Write

__all__ = ['CLICommand', 'CLIReadCommand', 'CLIWriteCommand']
