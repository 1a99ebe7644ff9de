"""What is read of a session: the status, the best trial, ratios to the
baseline, and the View the module, the panel and the reports take.

Pure functions of the persisted state; nothing here changes it.
"""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .store import SessionState


def best_trial(trials: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The best feasible trial (baseline runs count: 'keep what you have')."""
    ok = [t for t in trials
          if t['verdict'] in ('feasible', 'baseline') and t['score'] is not None]
    return min(ok, key=lambda t: t['score']) if ok else None


def status_of(s: SessionState, osd: int, progress: float, health: List[str],
              release_default: str, max_memtable_bytes: int) -> Dict[str, Any]:
    """The `status -f json` fields."""
    return {
        'state': s['state'], 'phase': s['phase'], 'id': s['id'], 'osd': osd,
        'reason': s['reason'], 'message': s['message'], 'error': s['error'],
        'params': s['params'], 'started': s['started'], 'ended': s['ended'],
        'trials_done': len([t for t in s['trials'] if t['kind'] == 'candidate']),
        'baseline_runs_done': len([t for t in s['trials'] if t['verdict'] == 'baseline']),
        'progress': progress, 'baseline': s['baseline'], 'best': best_trial(s['trials']),
        'current': s['current'], 'health': health,
        # others' checks at the last look before a restart: they block only
        # without --force; and the canary's crashes in failed trials, to archive
        'other_checks': s.get('other_checks', []),
        'crashes': [i for t in s['trials'] for i in t.get('crashes', [])],
        # read from the cluster at start (what differs by release)
        'release_default': release_default, 'sharding': s.get('sharding', ''),
        'max_memtable_bytes': max_memtable_bytes,
        # someone else's changes to the canary's config since the start
        'config_changes': s.get('config_changes') or [],
    }


@dataclass(frozen=True)
class View:
    """What the module, the panel and the reports read of a session: copies,
    taken by the serve thread between steps."""
    status: Dict[str, Any]  # the `status -f json` fields
    record: Dict[str, Any]  # the persisted state (trials, alerts, baseline)
    active: bool
    progress: float

    @property
    def id(self) -> str:
        return str(self.status['id'])

    @property
    def osd(self) -> int:
        return int(self.status['osd'])

    @property
    def state(self) -> str:
        return str(self.status['state'])

    @property
    def phase(self) -> str:
        return str(self.status['phase'])

    @property
    def message(self) -> str:
        return str(self.status['message'])

    @property
    def reason(self) -> str:
        return str(self.status['reason'])


@dataclass
class Ratios:
    iops: Optional[float] = None
    kv_sync_lat: Optional[float] = None
    write_amp: Optional[float] = None


def ratios(trial: Dict[str, Any], baseline: Dict[str, Any]) -> Ratios:
    """A trial's figures over the baseline's medians."""
    m = trial.get('measurement') or {}
    r = Ratios()
    if m.get('iops') and baseline.get('iops'):
        r.iops = m['iops'] / baseline['iops']
    if m.get('kv_sync_lat_ms') and baseline.get('kv_sync_lat_ms'):
        r.kv_sync_lat = m['kv_sync_lat_ms'] / baseline['kv_sync_lat_ms']
    if m.get('write_amp') is not None and baseline.get('write_amp'):
        r.write_amp = m['write_amp'] / baseline['write_amp']
    return r
