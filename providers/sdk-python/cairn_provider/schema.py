"""Schemas in a few lines, and their flattened wire form.

    Schema(0, description="A zip file.", attributes={
        "source_file": Attr(STRING, optional=True, description="File to archive."),
        "tags":        Attr(map_of(STRING), optional=True),
        "id":          Attr(STRING, computed=True),
    }, blocks={
        "rule": NestedBlock("list", Block({"port": Attr(NUMBER, required=True)}), min_items=1),
    })

A nested attribute type is `Attr(nested=Nested("list", Block({...})), optional=True)`.
"""

NESTINGS = ("single", "list", "set", "map")


class Type:
    """A value type: `BOOL`, `NUMBER`, `STRING`, `DYNAMIC`, or one built
    with `list_of`, `set_of`, `map_of`, `object_of`, `tuple_of`."""

    __slots__ = ("kind", "args")

    def __init__(self, kind, args=None):
        self.kind = kind
        self.args = args

    def __repr__(self):
        return self.kind if self.args is None else f"{self.kind}({self.args!r})"

    def _flatten(self, types, nodes):
        at = len(nodes)
        nodes.append(None)
        k = self.kind
        if k == "bool":
            node = types.TypeNode_Boolean()
        elif k == "number":
            node = types.TypeNode_Number()
        elif k == "string":
            node = types.TypeNode_Text()
        elif k == "dynamic":
            node = types.TypeNode_Dynamic()
        elif k == "list":
            node = types.TypeNode_List(self.args._flatten(types, nodes))
        elif k == "set":
            node = types.TypeNode_Set(self.args._flatten(types, nodes))
        elif k == "map":
            node = types.TypeNode_Map(self.args._flatten(types, nodes))
        elif k == "object":
            node = types.TypeNode_Object([(n, t._flatten(types, nodes)) for n, t in self.args.items()])
        else:
            node = types.TypeNode_Tuple([t._flatten(types, nodes) for t in self.args])
        nodes[at] = node
        return at

    def to_wire(self, types):
        """The flattened `type-expr`."""
        nodes = []
        self._flatten(types, nodes)
        return types.TypeExpr(nodes=nodes)


BOOL = Type("bool")
NUMBER = Type("number")
STRING = Type("string")
DYNAMIC = Type("dynamic")


def _check_type(t, where):
    if not isinstance(t, Type):
        raise TypeError(f"{where}: expected a cairn type (BOOL, NUMBER, STRING, list_of(...), ...), got {t!r}")
    return t


def list_of(element):
    """A list whose elements have type `element`."""
    return Type("list", _check_type(element, "list_of"))


def set_of(element):
    """A set whose elements have type `element`."""
    return Type("set", _check_type(element, "set_of"))


def map_of(element):
    """A map from strings to elements of type `element`."""
    return Type("map", _check_type(element, "map_of"))


def object_of(attrs):
    """An object with exactly these attributes: a dict of name to type."""
    return Type("object", {n: _check_type(t, f"object_of[{n!r}]") for n, t in attrs.items()})


def tuple_of(elements):
    """A tuple with exactly these element types."""
    return Type("tuple", [_check_type(t, "tuple_of") for t in elements])


class Nested:
    """A nested attribute type: one object (`"single"`) or a list, set or map
    of objects, whose attributes are `block`'s (which must have no blocks)."""

    def __init__(self, nesting, block):
        self.nesting = nesting
        self.block = block


class Attr:
    """One attribute: its type (or `nested`) and flags."""

    def __init__(self, type=None, *, nested=None, required=False, optional=False, computed=False,
                 sensitive=False, write_only=False, description=""):
        self.type = type
        self.nested = nested
        self.required = required
        self.optional = optional
        self.computed = computed
        self.sensitive = sensitive
        self.write_only = write_only
        self.description = description


class NestedBlock:
    """A nested block type: `nesting` is "single", "list", "set" or "map"."""

    def __init__(self, nesting, block, min_items=0, max_items=0):
        self.nesting = nesting
        self.block = block
        self.min_items = min_items
        self.max_items = max_items


class Block:
    """The contents of a block: attributes and nested block types, by name."""

    def __init__(self, attributes=None, blocks=None, description=""):
        self.attributes = dict(attributes or {})
        self.blocks = dict(blocks or {})
        self.description = description

    def check(self, where, errors, nested_attr=False):
        """Append a message to `errors` for each declaration mistake."""
        for name, a in self.attributes.items():
            at = f"{where}: attribute `{name}`"
            if not isinstance(a, Attr):
                errors.append(f"{at} is not an Attr")
                continue
            if (a.type is None) == (a.nested is None):
                errors.append(f"{at} needs exactly one of a type and `nested`")
            elif a.type is not None and not isinstance(a.type, Type):
                errors.append(f"{at} has type {a.type!r}, which is not a cairn type")
            if a.nested is not None:
                if a.nested.nesting not in NESTINGS:
                    errors.append(f"{at} has nesting {a.nested.nesting!r}; use one of {', '.join(NESTINGS)}")
                a.nested.block.check(f"{at} (nested)", errors, nested_attr=True)
            if not (a.required or a.optional or a.computed):
                errors.append(f"{at} is none of required, optional and computed")
            if a.required and (a.optional or a.computed):
                errors.append(f"{at} is required, so it cannot also be optional or computed")
            if a.write_only and a.computed:
                errors.append(f"{at} is write-only, so it cannot be computed")
        for name, b in self.blocks.items():
            at = f"{where}: block `{name}`"
            if nested_attr:
                errors.append(f"{at}: a nested attribute type holds attributes only, not blocks")
            if name in self.attributes:
                errors.append(f"{at} has the name of an attribute")
            if not isinstance(b, NestedBlock):
                errors.append(f"{at} is not a NestedBlock")
                continue
            if b.nesting not in NESTINGS:
                errors.append(f"{at} has nesting {b.nesting!r}; use one of {', '.join(NESTINGS)}")
            if b.max_items and b.min_items > b.max_items:
                errors.append(f"{at} has min_items {b.min_items} above max_items {b.max_items}")
            b.block.check(at, errors)

    def _flatten(self, types, blocks):
        at = len(blocks)
        blocks.append(None)
        attrs = []
        for name, a in self.attributes.items():
            nested = None
            if a.nested is not None:
                nested = types.NestedType(nesting=_nesting(types, a.nested.nesting),
                                          block=a.nested.block._flatten(types, blocks))
            attrs.append(types.Attribute(
                name=name,
                type=a.type.to_wire(types) if a.type is not None else types.TypeExpr(nodes=[]),
                nested=nested, required=a.required, optional=a.optional, computed=a.computed,
                sensitive=a.sensitive, write_only=a.write_only, description=a.description))
        nested_blocks = [types.NestedBlock(name=name, nesting=_nesting(types, b.nesting),
                                           block=b.block._flatten(types, blocks),
                                           min_items=b.min_items, max_items=b.max_items)
                         for name, b in self.blocks.items()]
        blocks[at] = types.Block(attributes=attrs, blocks=nested_blocks, description=self.description)
        return at


def _nesting(types, name):
    return {"single": types.Nesting.SINGLE, "list": types.Nesting.LIST, "set": types.Nesting.SET,
            "map": types.Nesting.MAP}[name]


class Schema(Block):
    """The schema of a resource type, data source or the provider block:
    a top-level block with a state layout `version`."""

    def __init__(self, version=0, attributes=None, blocks=None, description=""):
        super().__init__(attributes, blocks, description)
        self.version = version

    def computed_attributes(self):
        """Names of the top-level computed attributes."""
        return [n for n, a in self.attributes.items() if a.computed]

    def sensitive_attributes(self):
        """Names of the top-level sensitive attributes."""
        return {n for n, a in self.attributes.items() if a.sensitive}

    def write_only_attributes(self):
        """Names of the top-level write-only attributes."""
        return [n for n, a in self.attributes.items() if a.write_only]

    def to_wire(self, types):
        """The flattened `schema`."""
        blocks = []
        self._flatten(types, blocks)
        return types.Schema(version=self.version, blocks=blocks)


class ProviderSchema:
    """Everything a provider offers: its own block, resources, data sources
    and ephemeral resources, each a dict of type name to `Schema`."""

    def __init__(self, provider=None, resources=None, data_sources=None, ephemeral_resources=None):
        self.provider = provider if provider is not None else Schema(0)
        self.resources = dict(resources or {})
        self.data_sources = dict(data_sources or {})
        self.ephemeral_resources = dict(ephemeral_resources or {})

    def check(self):
        """A list of declaration mistakes; empty when the schema is sound."""
        errors = []
        self.provider.check("provider", errors)
        tables = (("resource", self.resources), ("data source", self.data_sources),
                  ("ephemeral resource", self.ephemeral_resources))
        for kind, table in tables:
            for name, s in table.items():
                if not isinstance(s, Schema):
                    errors.append(f"{kind} `{name}` is not a Schema")
                    continue
                s.check(f"{kind} {name}", errors)
        return errors

    def to_wire(self, types):
        """The `provider-schema` record."""
        return types.ProviderSchema(
            provider=self.provider.to_wire(types),
            resources=[(n, s.to_wire(types)) for n, s in self.resources.items()],
            data_sources=[(n, s.to_wire(types)) for n, s in self.data_sources.items()])

    def ephemeral_to_wire(self, types):
        """The ephemeral resources' schemas, as `ephemeral-resources.schemas` answers."""
        return [(n, s.to_wire(types)) for n, s in self.ephemeral_resources.items()]
