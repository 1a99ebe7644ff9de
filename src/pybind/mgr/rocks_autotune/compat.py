"""What differs between the Ceph releases the module runs on, in one place.
Design: doc/dev/design.rst, dev-design-compat."""
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
