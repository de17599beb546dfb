"""Optional C extensions: whether one is built, and which implementation the environment asks for.

kubeloop ships a few hot paths twice: in Python, and in a C extension that setuptools builds when
a compiler is at hand (``optional = true`` in pyproject's ``ext-modules``). Each pairing has an
environment variable with the same three values:

- ``auto`` (the default, also for an empty value): the C extension when it imports and its
  ``ABI`` constant equals the one its Python side was written for, else the Python code (an
  install without a C compiler, or a stale build);
- ``native``: the C extension; its absence is an error naming the variable;
- ``python``: the Python code.

Any other value is a :class:`ValueError` naming the variable. A :class:`NativeChoice` knows one
pairing; its caller decides when the choice is read (once per process, or at each use).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

MODES = ("auto", "native", "python")


class NativeChoice:
    """One optional extension ``module``, the ``abi`` its Python side expects, and the
    environment variable ``env_var`` that chooses between it and the Python code."""

    def __init__(self, module: str, abi: int, env_var: str) -> None:
        self.module = module
        self.abi = abi
        self.env_var = env_var
        self.extension = self._load()
        """The extension module, None when it is not built (or is of another ABI)."""

    def _load(self) -> ModuleType | None:
        try:
            loaded = importlib.import_module(self.module)
        except ImportError:
            return None
        return loaded if getattr(loaded, "ABI", None) == self.abi else None

    def available(self) -> bool:
        """Whether the extension is built and of the expected ABI."""
        return self.extension is not None

    def mode(self) -> str:
        """The implementation the environment asks for now (see the module doc)."""
        chosen = os.environ.get(self.env_var, "auto").strip().lower() or "auto"
        if chosen not in MODES:
            raise ValueError(f"{self.env_var}={chosen!r}: expected one of {', '.join(MODES)}")
        return chosen

    def resolve(self, chosen: str, built: bool) -> bool:
        """Whether the extension serves under the mode ``chosen`` when it is ``built`` or not."""
        if chosen == "native" and not built:
            raise RuntimeError(f"{self.env_var}=native but {self.module} is not built "
                               "(or is of another ABI): reinstall kubeloop with a C compiler")
        return chosen != "python" and built

    def enabled(self) -> bool:
        """Whether the extension serves under the environment as it is now."""
        return self.resolve(self.mode(), self.available())
