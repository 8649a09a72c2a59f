"""The errors saferl reports to a user as one line (``saferl: error: ...``).

Every check that can fail on user input raises one of these (or a ``ValueError``
whose message names the bad value and what is allowed); the command line prints
the message alone, never a traceback.
"""

from __future__ import annotations

import importlib


class MissingExtraError(RuntimeError):
    """An optional dependency is not installed; the message names the extra that provides it."""


def require(module: str, extra: str, what: str):
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'saferl[extra]'``.

    ``what`` says what needs it, e.g. ``"EcoAnt (MJX)"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        missing = getattr(err, "name", None) or module
        raise MissingExtraError(
            f"{what} needs the optional extra '{extra}' (module {missing!r} is not installed): "
            f"pip install 'saferl[{extra}]'"
        ) from None
