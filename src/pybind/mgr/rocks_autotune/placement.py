"""Which PG an object lands in, as Ceph computes it (no library offers it).
Design: doc/dev/internals.rst, dev-internals-load."""
from typing import Tuple

M32 = 0xFFFFFFFF


def _mix(a: int, b: int, c: int) -> Tuple[int, int, int]:
    a = (a - b - c) & M32
    a ^= c >> 13
    b = (b - c - a) & M32
    b ^= (a << 8) & M32
    c = (c - a - b) & M32
    c ^= b >> 13
    a = (a - b - c) & M32
    a ^= c >> 12
    b = (b - c - a) & M32
    b ^= (a << 16) & M32
    c = (c - a - b) & M32
    c ^= b >> 5
    a = (a - b - c) & M32
    a ^= c >> 3
    b = (b - c - a) & M32
    b ^= (a << 10) & M32
    c = (c - a - b) & M32
    c ^= b >> 15
    return a, b, c


def str_hash_rjenkins(name: bytes) -> int:
    """Ceph's ceph_str_hash_rjenkins (Bob Jenkins' lookup2)."""
    a = b = 0x9e3779b9
    c = 0
    i = 0
    while len(name) - i >= 12:
        a = (a + int.from_bytes(name[i:i + 4], 'little')) & M32
        b = (b + int.from_bytes(name[i + 4:i + 8], 'little')) & M32
        c = (c + int.from_bytes(name[i + 8:i + 12], 'little')) & M32
        a, b, c = _mix(a, b, c)
        i += 12
    rest = name[i:]
    c = (c + len(name)) & M32
    # the last bytes: a and b take up to 4 each, c the next 3 above its low byte
    a = (a + int.from_bytes(rest[0:4], 'little')) & M32
    b = (b + int.from_bytes(rest[4:8], 'little')) & M32
    c = (c + (int.from_bytes(rest[8:11], 'little') << 8)) & M32
    return _mix(a, b, c)[2]


def stable_mod(x: int, b: int) -> int:
    """ceph_stable_mod: x onto [0, b) so that growing b moves few values."""
    mask = (1 << (b - 1).bit_length()) - 1
    return x & mask if (x & mask) < b else x & (mask >> 1)


def pg_of(name: str, pg_num: int, namespace: str = '') -> int:
    """The PG seed (the part of the pgid after the pool's) an object lands in."""
    key = f'{namespace}\x1f{name}' if namespace else name
    return stable_mod(str_hash_rjenkins(key.encode()), pg_num)
