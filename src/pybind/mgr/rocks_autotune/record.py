"""The records the store keeps field for field share their JSON (to_json,
from_json): JSON only in the store, each field as it is."""
from dataclasses import asdict
from typing import Any, ClassVar, Dict, Type, TypeVar

R = TypeVar('R', bound='Record')


class Record:
    """A dataclass's JSON: its fields (from_json: TypeError, not its fields)."""
    __dataclass_fields__: ClassVar[Dict[str, Any]]

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls: Type[R], saved: Dict[str, Any]) -> R:
        return cls(**saved)
