from .module import LabOrchestrator  # noqa: F401
