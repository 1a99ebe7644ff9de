"""The typed records' JSON, one codec driven by their dataclass fields:
JSON only in the store, each field as it is."""
from dataclasses import MISSING, fields, is_dataclass
from enum import Enum
from typing import (Any, ClassVar, Dict, FrozenSet, Iterable, Tuple, Type, TypeVar, Union,
                    get_args, get_origin, get_type_hints)

T = TypeVar('T')
R = TypeVar('R', bound='Record')
# a dataclass's field types, in order, and the fields without a default
_TYPES: Dict[type, Tuple[Dict[str, Any], FrozenSet[str]]] = {}
_SCALARS = frozenset((str, int, float, bool, type(None)))
_TAKES: Dict[Any, Any] = {float: (int, float)}  # a float field may hold an int


def _types(cls: type) -> Tuple[Dict[str, Any], FrozenSet[str]]:
    if cls not in _TYPES:
        hints, fs = get_type_hints(cls), fields(cls)
        _TYPES[cls] = ({f.name: hints[f.name] for f in fs}, frozenset(
            f.name for f in fs if f.default is MISSING and f.default_factory is MISSING))
    return _TYPES[cls]


def encode(v: Any) -> Any:
    """`v` as JSON: containers new at every level, what they hold as it is
    (asdict's deep copy of every trial at each save made the steps twice as slow)."""
    if type(v) in _SCALARS:
        return v
    if isinstance(v, (list, tuple)):
        return [x if type(x) in _SCALARS else encode(x) for x in v]
    if isinstance(v, dict):
        return {k: x if type(x) in _SCALARS else encode(x) for k, x in v.items()}
    if isinstance(v, Record):
        return v.to_json()
    if isinstance(v, Enum):
        return v.value
    if is_dataclass(v):
        return {k: encode(getattr(v, k)) for k in _types(type(v))[0]}
    return v


def make(cls: Type[T], saved: Any, **made: Any) -> T:
    """A `cls` of its JSON, each field checked against its type (`made`: those
    read by hand).  ValueError: not one this code wrote."""
    types, required = _types(cls)
    if not isinstance(saved, dict):
        raise ValueError(f'a {cls.__name__} is not a record')
    wrong = sorted(required - saved.keys() - made.keys()) or sorted(saved.keys() - types.keys())
    if wrong:
        raise ValueError(f'{cls.__name__} field {wrong[0]!r} is missing or unknown')
    return cls(**{k: _decode(types[k], v, f'{cls.__name__} field {k!r}')
                  for k, v in saved.items() if k not in made}, **made)


def _decode(tp: Any, v: Any, where: str) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Union:  # Optional[X]
        return None if v is None else _decode(args[0], v, where)
    if origin in (list, tuple) and type(v) is list:  # the tuples hold one type
        return origin(_decode(args[0], x, where) for x in v)
    if origin is dict and type(v) is dict:
        return {k: _decode(args[1], x, where) for k, x in v.items()}
    if tp is Any:
        return v
    if origin is None and isinstance(tp, type):
        if is_dataclass(tp):
            if type(v) is dict:
                return tp.from_json(v) if issubclass(tp, Record) else make(tp, v)
        elif isinstance(v, _TAKES.get(tp, tp)):
            return v
    raise ValueError(f'{where} is missing or malformed')


class Record:
    """A dataclass the store keeps: its fields' JSON (encode), read back by their types (make)."""
    __dataclass_fields__: ClassVar[Dict[str, Any]]
    OMIT_NONE: ClassVar[Tuple[str, ...]] = ()  # fields left out while None (read back as None)

    def to_json(self) -> Dict[str, Any]:
        return self.json_of(_types(type(self))[0])

    def json_of(self, names: Iterable[str]) -> Dict[str, Any]:
        """The JSON of its fields `names`."""
        omit = self.OMIT_NONE
        return {k: v if type(v) in _SCALARS else encode(v) for k in names
                for v in (getattr(self, k),) if v is not None or k not in omit}

    @classmethod
    def from_json(cls: Type[R], saved: Any) -> R:
        """ValueError: not one this code wrote."""
        return make(cls, saved)
