"""Values: the flattened WIT `value` (a node list, root first) as ordinary
Python values, and back.

    wire node          Python value
    ---------          ------------
    null               None
    unknown(refs)      Unknown(...)          (refinements kept)
    boolean            bool
    integer / float    int / float           (ints out of the i64 range travel as float)
    text               str
    list               list
    set                ValueSet              (a list; order carries no meaning)
    map                ValueMap              (a dict of string keys)
    object             dict
    tuple              tuple
    sensitive mark     Sensitive(value)      (on encode; see `decode(keep_marks=...)`)

`decode` and `encode` take the generated bindings module (`wit_world.imports.types`)
as an argument, so this file is plain Python that runs anywhere.
"""

import math

I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1


class Unknown:
    """A value only apply can tell. The refinements say what is already
    known about it; the host holds the final value to them.

    `lower` and `upper` are numbers, inclusive unless `lower_inclusive` /
    `upper_inclusive` is False. A string prefix implies not null.
    """

    __slots__ = ("not_null", "prefix", "lower", "lower_inclusive", "upper", "upper_inclusive", "min_length", "max_length")

    def __init__(self, not_null=False, prefix=None, lower=None, upper=None, min_length=None, max_length=None,
                 lower_inclusive=True, upper_inclusive=True):
        self.not_null = bool(not_null) or prefix is not None
        self.prefix = prefix
        self.lower = lower
        self.lower_inclusive = lower_inclusive
        self.upper = upper
        self.upper_inclusive = upper_inclusive
        self.min_length = min_length
        self.max_length = max_length

    def _key(self):
        return tuple(getattr(self, s) for s in self.__slots__)

    def __eq__(self, other):
        return isinstance(other, Unknown) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        refs = ", ".join(f"{s}={getattr(self, s)!r}" for s in self.__slots__
                         if getattr(self, s) not in (None, False) and not s.endswith("_inclusive"))
        return f"Unknown({refs})"


class Sensitive:
    """Marks `value` (and everything inside it) secret: the host redacts it
    wherever it shows it. Attributes the schema declares sensitive are
    marked without this."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Sensitive) and equal(self.value, other.value)

    def __repr__(self):
        return "Sensitive(...)"


class ValueSet(list):
    """A set value: a list whose order means nothing (elements may be dicts,
    which Python's `set` cannot hold). Compares unordered with `equal`."""


class ValueMap(dict):
    """A map value (string keys, elements of one type), as opposed to an
    object (a plain dict: named attributes of their own types)."""


class WireError(ValueError):
    """A malformed value on the wire, or a Python value that has no wire form."""


def unwrap(value):
    """`value` without its `Sensitive` mark, if it has one."""
    return value.value if isinstance(value, Sensitive) else value


def is_known(value):
    """Whether nothing inside `value` is unknown."""
    return find_unknown(value) is None


def find_unknown(value, path=()):
    """The path (a tuple of steps) of the first unknown inside `value`, or None."""
    value = unwrap(value)
    if isinstance(value, Unknown):
        return path
    if isinstance(value, dict):
        for k, v in value.items():
            step = Key(k) if isinstance(value, ValueMap) else k
            found = find_unknown(v, path + (step,))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = find_unknown(v, path + (i,))
            if found is not None:
                return found
    return None


class Key(str):
    """A map key as a step of an attribute path (a plain `str` step names an
    attribute, an `int` step a list or tuple index)."""

    def __repr__(self):
        return f"Key({str.__repr__(self)})"


def equal(a, b):
    """Value equality as the host sees it: sets unordered, numbers by value,
    marks ignored."""
    a, b = unwrap(a), unwrap(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, ValueSet) or isinstance(b, ValueSet):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            return False
        rest = list(b)
        for x in a:
            for i, y in enumerate(rest):
                if equal(x, y):
                    del rest[i]
                    break
            else:
                return False
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    return a == b


# --- decoding -------------------------------------------------------------

def decode(wire_value, types, keep_marks=False):
    """The Python value of a wire `value`. An empty node list is null.
    With `keep_marks`, nodes marked sensitive come back wrapped in
    `Sensitive`; otherwise marks are dropped (the host keeps them)."""
    nodes = wire_value.nodes
    if not nodes:
        return None
    # Each node is decoded once and must be reached once: a node list with a
    # cycle or a shared child is malformed, as the host would also say.
    seen = set()

    def node(index, where):
        if not isinstance(index, int) or index < 0 or index >= len(nodes):
            raise WireError(f"{where}: node index {index} is out of range (the value has {len(nodes)} nodes)")
        if index in seen:
            raise WireError(f"{where}: node {index} is reached twice (a cycle or a shared node)")
        seen.add(index)
        n = nodes[index]
        v = kind(n.kind, index, where)
        return Sensitive(v) if keep_marks and n.sensitive else v

    def kind(k, index, where):
        if isinstance(k, types.ValueNode_Null):
            return None
        if isinstance(k, types.ValueNode_Unknown):
            return _decode_refinements(k.value, types)
        if isinstance(k, (types.ValueNode_Boolean, types.ValueNode_Integer, types.ValueNode_Text)):
            return k.value
        if isinstance(k, types.ValueNode_Float):
            if not math.isfinite(k.value):
                raise WireError(f"{where}: the number {k.value} is not finite")
            return k.value
        if isinstance(k, types.ValueNode_List):
            return [node(c, f"{where}[{i}]") for i, c in enumerate(k.value)]
        if isinstance(k, types.ValueNode_Set):
            return ValueSet(node(c, f"{where}[{i}]") for i, c in enumerate(k.value))
        if isinstance(k, types.ValueNode_Tuple):
            return tuple(node(c, f"{where}[{i}]") for i, c in enumerate(k.value))
        if isinstance(k, (types.ValueNode_Map, types.ValueNode_Object)):
            out = ValueMap() if isinstance(k, types.ValueNode_Map) else {}
            for name, c in k.value:
                if name in out:
                    raise WireError(f"{where}: the key {name!r} appears twice")
                out[name] = node(c, f"{where}.{name}")
            return out
        raise WireError(f"{where}: node {index} has an unexpected kind {k!r}")

    return node(0, "value")


def _decode_refinements(r, types):
    def bound(b):
        return (None, True) if b is None else (b.value.value, b.inclusive)

    lower, lower_inclusive = bound(r.lower)
    upper, upper_inclusive = bound(r.upper)
    return Unknown(not_null=r.not_null, prefix=r.prefix, lower=lower, upper=upper, min_length=r.min_length,
                   max_length=r.max_length, lower_inclusive=lower_inclusive, upper_inclusive=upper_inclusive)


# --- encoding -------------------------------------------------------------

def encode(value, types, sensitive_attrs=()):
    """The wire `value` of a Python value. Top-level attributes of an object
    named in `sensitive_attrs` are marked sensitive (the SDK passes the
    schema's sensitive attributes)."""
    nodes = []

    def put(v, sensitive, where):
        if isinstance(v, Sensitive):
            return put(v.value, True, where)
        at = len(nodes)
        nodes.append(None)  # reserved: the root comes first, children after
        nodes[at] = types.Node(kind=kind(v, where), sensitive=sensitive)
        return at

    def kind(v, where):
        if v is None:
            return types.ValueNode_Null()
        if isinstance(v, Unknown):
            return types.ValueNode_Unknown(_encode_refinements(v, types, where))
        if isinstance(v, bool):
            return types.ValueNode_Boolean(v)
        if isinstance(v, int):
            if I64_MIN <= v <= I64_MAX:
                return types.ValueNode_Integer(v)
            return types.ValueNode_Float(_finite(float(v), where))
        if isinstance(v, float):
            # Whole numbers in the i64 range travel as integers, as the Rust
            # SDK sends them, so that 3.0 and 3 are the same value.
            if v.is_integer() and I64_MIN <= v <= I64_MAX:
                return types.ValueNode_Integer(int(v))
            return types.ValueNode_Float(_finite(v, where))
        if isinstance(v, str):
            return types.ValueNode_Text(v)
        if isinstance(v, ValueSet):
            return types.ValueNode_Set([put(x, False, f"{where}[{i}]") for i, x in enumerate(v)])
        if isinstance(v, (set, frozenset)):
            # Sorted by representation so that the same set encodes the same way.
            items = sorted(v, key=repr)
            return types.ValueNode_Set([put(x, False, f"{where}[{i}]") for i, x in enumerate(items)])
        if isinstance(v, list):
            return types.ValueNode_List([put(x, False, f"{where}[{i}]") for i, x in enumerate(v)])
        if isinstance(v, tuple):
            return types.ValueNode_Tuple([put(x, False, f"{where}[{i}]") for i, x in enumerate(v)])
        if isinstance(v, dict):
            entries = []
            for k, x in v.items():
                if not isinstance(k, str):
                    raise WireError(f"{where}: key {k!r} is not a string")
                marked = where == "value" and k in sensitive_attrs
                entries.append((k, put(x, marked, f"{where}.{k}")))
            if isinstance(v, ValueMap):
                return types.ValueNode_Map(entries)
            return types.ValueNode_Object(entries)
        raise WireError(f"{where}: a {type(v).__name__} has no cairn value (use None, bool, int, float, str, "
                        "list, tuple, dict, ValueMap, ValueSet, set, Unknown or Sensitive)")

    put(value, False, "value")
    return types.Value(nodes=nodes)


def _finite(f, where):
    if not math.isfinite(f):
        raise WireError(f"{where}: the number {f} is not finite (cairn numbers are finite)")
    return f


def _encode_refinements(u, types, where):
    def number(n):
        if isinstance(n, bool) or not isinstance(n, (int, float)):
            raise WireError(f"{where}: a number bound must be a number, not {n!r}")
        if isinstance(n, int) and I64_MIN <= n <= I64_MAX:
            return types.Number_Integer(n)
        return types.Number_Float(_finite(float(n), where))

    def bound(n, inclusive):
        return None if n is None else types.NumberBound(value=number(n), inclusive=inclusive)

    return types.Refinements(not_null=u.not_null, prefix=u.prefix, lower=bound(u.lower, u.lower_inclusive),
                             upper=bound(u.upper, u.upper_inclusive), min_length=u.min_length,
                             max_length=u.max_length)
