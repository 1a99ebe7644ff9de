"""rocks_autotune: Bayesian tuning of BlueStore's RocksDB options on a canary OSD.

Thin glue between the mgr and the plain-Python pieces of this package.
"""
import json
import threading
from typing import Any, Tuple

from mgr_module import CLIReadCommand, MgrModule, Option


class RocksAutotune(MgrModule):
    MODULE_OPTIONS = [
        Option('sleep_interval', type='secs', default=5,
               desc='how often the session loop wakes when nothing else wakes it'),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.event = threading.Event()
        self.run = True

    @CLIReadCommand('rocks-autotune status')
    def cmd_status(self, format: str = 'plain') -> Tuple[int, str, str]:
        """Show the tuning session's state"""
        status = {'state': 'idle'}
        if format in ('json', 'json-pretty'):
            return 0, json.dumps(status), ''
        return 0, 'state: idle', ''

    def serve(self) -> None:
        while self.run:
            self.event.wait(float(self.get_module_option('sleep_interval') or 5))
            self.event.clear()

    def shutdown(self) -> None:
        self.run = False
        self.event.set()
