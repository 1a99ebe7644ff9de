"""An orchestrator backend for the lab's own daemons (test infrastructure).

Lets `ceph orch ps` list the lab's processes and `ceph orch daemon restart
osd.N` really restart one, so code written against the orchestrator API (as on
a cephadm or rook cluster) runs unchanged on the lab.  Enabled only by
qa/lab/ceph-lab; it never ships in src/.
"""
import datetime
import os
from typing import Any, Dict, List, Optional, Tuple

import orchestrator
from mgr_module import MgrModule, NotifyType, Option
from orchestrator import DaemonDescription, DaemonDescriptionStatus, handle_orch_error

from .daemons import LabDaemons

try:  # Tentacle asks every module for its own command registry (this one is empty)
    from mgr_module import CLICommandBase  # type: ignore[attr-defined]
    _COMMANDS: Any = CLICommandBase.make_registry_subtype('LabOrchestratorCLICommand')
except ImportError:  # Pacific: one global registry
    _COMMANDS = None

ACTIONS = ('start', 'stop', 'restart')


class LabOrchestrator(MgrModule, orchestrator.Orchestrator):
    CLICommand = _COMMANDS
    NOTIFY_TYPES: List[NotifyType] = []
    MODULE_OPTIONS = [
        Option('lab_dir', type='str', default='', desc='the lab directory (set by ceph-lab)'),
        Option('fail_actions', type='bool', default=False,
               desc='test hook: make every daemon action fail'),
        Option('restart_pause', type='float', default=0.0,
               desc='test hook: seconds between the stop and the start of a restart'),
    ]

    def _lab(self) -> LabDaemons:
        lab_dir = str(self.get_module_option('lab_dir') or '')
        if not lab_dir or not os.path.isdir(lab_dir):
            raise orchestrator.OrchestratorError(f'lab_dir {lab_dir!r} is not a lab directory')
        return LabDaemons(lab_dir)

    def available(self) -> Tuple[bool, str, Dict[str, Any]]:
        try:
            self._lab()
        except orchestrator.OrchestratorError as e:
            return False, str(e), {}
        return True, '', {}

    @handle_orch_error
    def list_daemons(self, service_name: Optional[str] = None,
                     daemon_type: Optional[str] = None, daemon_id: Optional[str] = None,
                     host: Optional[str] = None,
                     refresh: bool = False) -> List[DaemonDescription]:
        lab = self._lab()
        result = []
        for name in lab.names():
            typ, _, ident = name.partition('.')
            if (daemon_type and typ != daemon_type) or (daemon_id and ident != daemon_id):
                continue
            if service_name and service_name not in (typ, name):
                continue
            pid = lab.pid(name)
            started = None
            if pid:
                started = datetime.datetime.fromtimestamp(
                    os.stat(f'/proc/{pid}').st_mtime, tz=datetime.timezone.utc)
            result.append(DaemonDescription(
                daemon_type=typ, daemon_id=ident, hostname='localhost',
                status=DaemonDescriptionStatus.running if pid else DaemonDescriptionStatus.stopped,
                status_desc='running' if pid else 'stopped', started=started,
                is_active=bool(pid)))
        return result

    @handle_orch_error
    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None,
                      force: bool = False) -> str:
        # force: Tentacle's `ceph orch daemon restart --force` (skips cephadm's
        # own ok-to-stop); the lab restarts what it is told either way
        if self.get_module_option('fail_actions'):
            raise orchestrator.OrchestratorError('lab_orchestrator: fail_actions test hook is set')
        typ, _, ident = daemon_name.partition('.')
        if typ != 'osd' or not ident.isdigit():
            raise orchestrator.OrchestratorError(
                f'lab_orchestrator manages OSDs only, not {daemon_name!r}')
        if action not in ACTIONS:
            raise orchestrator.OrchestratorError(f'action {action!r} not in {ACTIONS}')
        lab = self._lab()
        if daemon_name not in lab.names():
            raise orchestrator.OrchestratorError(f'no such daemon {daemon_name!r} in the lab')
        if action == 'stop':
            lab.stop(daemon_name)
            return f'Stopped {daemon_name}'
        pid = (lab.restart(daemon_name, float(self.get_module_option('restart_pause') or 0))
               if action == 'restart' else lab.start(daemon_name))
        self.log.info('%s %s: pid %d', action, daemon_name, pid)
        past = {'start': 'Started', 'restart': 'Restarted'}[action]
        return f'{past} {daemon_name} (pid {pid})'
