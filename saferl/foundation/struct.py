"""Immutable pytree dataclasses (states, params, hyper-parameters).

``@struct.dataclass`` makes a frozen dataclass whose fields are pytree leaves,
except those declared with ``struct.field(static=True)``, which are part of the
tree structure (shapes, counts, flags: anything that changes compiled code).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax


def field(*, static: bool = False, **kwargs) -> Any:
    metadata = dict(kwargs.pop("metadata", {}) or {})
    metadata["static"] = static
    return dataclasses.field(metadata=metadata, **kwargs)


def dataclass(cls=None, **kwargs):
    def wrap(klass):
        klass = dataclasses.dataclass(frozen=True, **kwargs)(klass)
        data, meta = [], []
        for f in dataclasses.fields(klass):
            (meta if f.metadata.get("static", False) else data).append(f.name)
        jax.tree_util.register_dataclass(klass, data_fields=data, meta_fields=meta)
        klass.replace = lambda self, **changes: dataclasses.replace(self, **changes)
        return klass

    return wrap if cls is None else wrap(cls)
