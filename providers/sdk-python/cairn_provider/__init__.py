"""cairn provider SDK for Python (componentize-py).

Write a `Provider` subclass with a `schema`, and in the component's app
module `Provider = export(MyProvider)`. See `docs/writing-providers-python-js.md`.
"""

from . import log
from .glue import export, export_ephemeral_resources, make_ephemeral_exports, make_exports
from .provider import (ApplyRequest, ApplyResponse, Diagnostic, Diagnostics, OpenResponse, PlanRequest, PlanResponse,
                       Provider, ProviderError, ReadRequest, RenewResponse, warning)
from .schema import (BOOL, DYNAMIC, NUMBER, STRING, Attr, Block, Nested, NestedBlock, ProviderSchema, Schema, Type,
                     list_of, map_of, object_of, set_of, tuple_of)
from .values import Key, Sensitive, Unknown, ValueMap, ValueSet, decode, encode, equal, find_unknown, is_known, unwrap

__all__ = [
    "ApplyRequest", "ApplyResponse", "Attr", "BOOL", "Block", "DYNAMIC", "Diagnostic", "Diagnostics", "Key", "NUMBER",
    "Nested", "NestedBlock", "PlanRequest", "PlanResponse", "Provider", "ProviderError", "ProviderSchema",
    "ReadRequest", "STRING", "Schema", "Sensitive", "Type", "Unknown", "ValueMap", "ValueSet", "decode", "encode",
    "equal", "export", "export_ephemeral_resources", "find_unknown", "is_known", "list_of", "log",
    "make_ephemeral_exports", "make_exports", "map_of", "object_of", "OpenResponse", "RenewResponse", "set_of",
    "tuple_of", "unwrap", "warning",
]
