"""Unit tests of the Python SDK against the generated bindings.

Run by the e2e test `python::python_sdk_unit_tests_pass`, or by hand:
    componentize-py -d providers/sdk-python/wit -w python-provider bindings /tmp/b
    PYTHONPATH=/tmp/b:providers/sdk-python python3 -m unittest discover -s providers/sdk-python/tests
"""

import datetime
import unittest

from wit_world.exports import ephemeral_resources as eph_abi
from wit_world.exports import provider as abi
from wit_world.imports import types

from cairn_provider import (BOOL, NUMBER, STRING, Attr, Block, Key, Nested, NestedBlock, OpenResponse, PlanResponse,
                            Provider, ProviderError, ProviderSchema, RenewResponse, Schema, Sensitive, Unknown,
                            ValueMap, ValueSet, decode, encode, equal, export, list_of, make_ephemeral_exports,
                            make_exports, map_of, object_of, warning)
from cairn_provider.values import WireError


def roundtrip(v, **kw):
    return decode(encode(v, types), types, **kw)


class Values(unittest.TestCase):
    def test_every_kind_round_trips(self):
        v = {"n": None, "b": True, "i": -(1 << 63), "f": 0.5, "s": "é", "l": [1, 2], "set": ValueSet(["a", "b"]),
             "m": ValueMap({"k": "v"}), "t": (1, "x"), "u": Unknown(), "o": {"deep": [{"x": 1}]}}
        back = roundtrip(v)
        self.assertTrue(equal(back, v))
        self.assertIsInstance(back["set"], ValueSet)
        self.assertIsInstance(back["m"], ValueMap)
        self.assertNotIsInstance(back["o"], ValueMap)
        self.assertIsInstance(back["t"], tuple)
        self.assertIs(type(back["b"]), bool)

    def test_the_root_comes_first_and_empty_is_null(self):
        w = encode({"a": [1]}, types)
        self.assertIsInstance(w.nodes[0].kind, types.ValueNode_Object)
        self.assertIsNone(decode(types.Value(nodes=[]), types))

    def test_numbers_keep_64_bits_and_whole_floats_are_integers(self):
        w = encode([(1 << 63) - 1, 3.0, 1 << 70, 0.1], types)
        kinds = [type(n.kind).__name__ for n in w.nodes[1:]]
        self.assertEqual(kinds, ["ValueNode_Integer", "ValueNode_Integer", "ValueNode_Float", "ValueNode_Float"])
        self.assertEqual(roundtrip([(1 << 63) - 1])[0], (1 << 63) - 1)
        with self.assertRaisesRegex(WireError, "not finite"):
            encode(float("nan"), types)

    def test_refinements_travel(self):
        u = Unknown(prefix="arn:", lower=1, upper=9.5, upper_inclusive=False, min_length=2, max_length=2)
        back = roundtrip(u)
        self.assertEqual(back, u)
        self.assertTrue(back.not_null, "a prefix implies not null")
        r = encode(u, types).nodes[0].kind.value
        self.assertEqual(r.lower.value, types.Number_Integer(1))
        self.assertFalse(r.upper.inclusive)

    def test_sensitive_marks_from_wrappers_and_the_schema(self):
        w = encode({"a": Sensitive("x"), "b": "y", "c": ["z"]}, types, sensitive_attrs={"c"})
        marked = {name: w.nodes[i].sensitive for name, i in w.nodes[0].kind.value}
        self.assertEqual(marked, {"a": True, "b": False, "c": True})
        self.assertEqual(decode(w, types)["a"], "x")
        self.assertEqual(decode(w, types, keep_marks=True)["a"], Sensitive("x"))

    def test_malformed_values_are_refused_with_where(self):
        bad = types.Value(nodes=[types.Node(kind=types.ValueNode_List([0]), sensitive=False)])
        with self.assertRaisesRegex(WireError, "reached twice"):
            decode(bad, types)
        bad = types.Value(nodes=[types.Node(kind=types.ValueNode_Object([("a", 5)]), sensitive=False)])
        with self.assertRaisesRegex(WireError, r"value\.a: node index 5 is out of range"):
            decode(bad, types)
        with self.assertRaisesRegex(WireError, r"value\.x: a object has no cairn value"):
            encode({"x": object()}, types)

    def test_sets_compare_unordered(self):
        self.assertTrue(equal(ValueSet([1, 2]), ValueSet([2, 1])))
        self.assertFalse(equal([1, 2], [2, 1]))
        self.assertFalse(equal(True, 1))


SCHEMA = Schema(1, attributes={
    "name": Attr(STRING, required=True),
    "size": Attr(NUMBER, optional=True, computed=True),
    "tags": Attr(map_of(STRING), optional=True),
    "secret": Attr(STRING, computed=True, sensitive=True),
    "password": Attr(STRING, optional=True, write_only=True),
    "rules": Attr(nested=Nested("list", Block({"port": Attr(NUMBER, required=True)})), optional=True),
    "id": Attr(STRING, computed=True),
}, blocks={"limit": NestedBlock("single", Block({"max": Attr(BOOL, optional=True)}), max_items=1)})


class Echo(Provider):
    schema = ProviderSchema(resources={"echo": SCHEMA}, data_sources={"echo": Schema(0, attributes={
        "in": Attr(list_of(object_of({"a": STRING})), required=True), "out": Attr(STRING, computed=True)})})

    def configure(self, config):
        self.greeting = (config or {}).get("greeting", "hi")

    def validate(self, type_name, config):
        if config.get("name") == "":
            raise ProviderError("empty name", path=("name",))
        return []

    def plan(self, req):
        return PlanResponse.from_proposed(req).default("size", 1).requires_replace("name")

    def apply(self, req):
        if req.is_delete:
            return None
        if req.planned_state["name"] == "boom":
            raise KeyError("boom")
        if req.planned_state["name"] == "unknown":
            return req.planned_state
        return dict(req.planned_state, secret="s", id=req.planned_or("id", lambda: req.idempotency_key))

    def read_data_source(self, type_name, config):
        return dict(config, out=",".join(x["a"] for x in config["in"]))


def obj(**attrs):
    base = {n: None for n in SCHEMA.attributes}
    base["limit"] = None
    base.update(attrs)
    return base


class Glue(unittest.TestCase):
    def setUp(self):
        self.p = make_exports(Echo, types, abi)()
        self.assertEqual(self.p.configure(encode(None, types)), [])

    def plan(self, prior, config):
        proposed = dict(config)
        for n in SCHEMA.computed_attributes():
            if config.get(n) is None and prior is not None:
                proposed[n] = prior[n]
        return self.p.plan_resource(abi.PlanRequest(type_name="echo", prior_state=encode(prior, types),
                                                    proposed_new_state=encode(proposed, types),
                                                    config=encode(config, types), prior_private=b""))

    def apply(self, planned, prior=None):
        return self.p.apply_resource(abi.ApplyRequest(type_name="echo", prior_state=encode(prior, types),
                                                      planned_state=encode(planned, types), config=encode(planned, types),
                                                      planned_private=b"", idempotency_key="key-1"))

    def test_schema_flattens_with_nested_types_and_blocks(self):
        s = self.p.schema()
        echo = dict(s.resources)["echo"]
        self.assertEqual(echo.version, 1)
        self.assertEqual(len(echo.blocks), 3)  # top, the nested attribute's, the block's
        rules = [a for a in echo.blocks[0].attributes if a.name == "rules"][0]
        self.assertEqual(rules.nested.nesting, types.Nesting.LIST)
        self.assertEqual(echo.blocks[0].blocks[0].max_items, 1)
        tags = [a for a in echo.blocks[0].attributes if a.name == "tags"][0]
        self.assertEqual(tags.type.nodes, [types.TypeNode_Map(1), types.TypeNode_Text()])

    def test_schema_mistakes_are_found(self):
        bad = ProviderSchema(resources={"x": Schema(0, attributes={"a": Attr(STRING), "b": Attr(STRING, required=True,
                                                                                                   computed=True)})})
        errors = bad.check()
        self.assertIn("resource x: attribute `a` is none of required, optional and computed", errors)
        self.assertIn("resource x: attribute `b` is required, so it cannot also be optional or computed", errors)

        class Broken(Provider):
            schema = bad
        with self.assertRaisesRegex(TypeError, "invalid provider schema of Broken"):
            make_exports(Broken, types, abi)

    def test_plan_create_update_and_replace(self):
        resp = self.plan(None, obj(name="a", password="pw"))
        self.assertEqual(resp.diagnostics, [])
        planned = decode(resp.planned_state, types)
        self.assertEqual(planned["size"], 1, "the default")
        self.assertIsInstance(planned["id"], Unknown)
        self.assertIsNone(planned["password"], "write-only attributes are planned null")
        self.assertEqual(resp.requires_replace, [[types.PathStep_Attribute("name")]])
        # The schema's sensitive attribute carries the mark.
        marks = {n: resp.planned_state.nodes[i].sensitive for n, i in resp.planned_state.nodes[0].kind.value}
        self.assertTrue(marks["secret"])

        prior = obj(name="a", size=1, secret="s", id="i")
        same = decode(self.plan(prior, obj(name="a", tags=ValueMap({"k": "v"}))).planned_state, types)
        self.assertEqual(same["id"], "i", "an update keeps computed values")
        replaced = decode(self.plan(prior, obj(name="b")).planned_state, types)
        self.assertIsInstance(replaced["id"], Unknown, "a replacement is a new object")
        self.assertEqual(replaced["size"], 1, "defaults stay known")

    def test_apply_and_errors_become_diagnostics(self):
        resp = self.apply(obj(name="a", size=1, secret=Unknown(), id=Unknown()))
        self.assertEqual(resp.diagnostics, [])
        self.assertEqual(decode(resp.new_state, types)["id"], "key-1")

        resp = self.apply(obj(name="boom"))
        self.assertEqual(resp.diagnostics[0].summary, "Provider bug: KeyError: 'boom'")
        self.assertIn("Traceback", resp.diagnostics[0].detail)
        self.assertIsNone(decode(resp.new_state, types), "a failed create records nothing")

        resp = self.apply(obj(name="unknown", id=Unknown()))
        self.assertEqual(resp.diagnostics[0].summary, "Provider bug: the new state has an unknown value")

        diags = self.p.validate_resource("echo", encode(obj(name=""), types))
        self.assertEqual((diags[0].summary, diags[0].path), ("empty name", [types.PathStep_Attribute("name")]))
        self.assertEqual(diags[0].severity, types.Severity.ERROR)
        self.assertIn("nope", self.p.validate_resource("nope", encode(None, types))[0].summary)

    def test_paths_have_keys_and_indexes(self):
        class Pathy(Echo):
            def validate(self, type_name, config):
                raise ProviderError("bad", path=("rules", 0, "tags", Key("k")))
        p = make_exports(Pathy, types, abi)()
        p.configure(encode(None, types))
        path = p.validate_resource("echo", encode(obj(name="x"), types))[0].path
        self.assertEqual(path, [types.PathStep_Attribute("rules"), types.PathStep_Index(0),
                                types.PathStep_Attribute("tags"), types.PathStep_Key("k")])

    def test_read_import_data_and_upgrade_defaults(self):
        current = encode(obj(name="a"), types)
        read = self.p.read_resource(abi.ReadRequest(type_name="echo", current_state=current, private=b"keep"))
        self.assertEqual(decode(read.new_state, types), obj(name="a"))
        self.assertEqual(read.private, b"keep")
        self.assertIn("import", self.p.import_resource("echo", "x").diagnostics[0].summary)
        data = self.p.read_data_source("echo", encode({"in": [{"a": "x"}, {"a": "y"}], "out": None}, types))
        self.assertEqual(decode(data.state, types)["out"], "x,y")
        up = self.p.upgrade_state("echo", 1, '{"name": "a", "tags": {"k": "v"}}')
        self.assertEqual(up.diagnostics, [])
        self.assertIsInstance(decode(up.upgraded_state, types)["tags"], ValueMap)
        self.assertIn("version 0", self.p.upgrade_state("echo", 0, "{}").diagnostics[0].summary)

    def test_calls_before_configure_are_diagnosed(self):
        p = make_exports(Echo, types, abi)()
        self.assertEqual(p.validate_resource("echo", encode(None, types))[0].summary, "Provider not configured")


TOKEN = Schema(0, attributes={
    "audience": Attr(STRING, required=True),
    "value": Attr(STRING, computed=True, sensitive=True),
})


class Tokens(Provider):
    """Ephemeral `token`s whose private bytes count renewals."""
    schema = ProviderSchema(ephemeral_resources={"token": TOKEN})
    closed = []

    def validate_ephemeral(self, type_name, config):
        if config.get("audience") == "":
            raise ProviderError("empty audience", path=("audience",))
        return []

    def open_ephemeral(self, type_name, config):
        if config["audience"] == "boom":
            raise RuntimeError("cannot reach the token service")
        if config["audience"] == "plain":
            return dict(config, value="p")
        if config["audience"] == "unknown":
            return dict(config, value=Unknown())
        renew_at = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
        return OpenResponse(dict(config, value="t-" + config["audience"]), private=b"0", renew_at=renew_at)

    def renew_ephemeral(self, type_name, private):
        if private == b"bad":
            raise ProviderError("lease gone")
        n = int(private) + 1
        return RenewResponse(str(n).encode(), renew_at=1_000 * n, diagnostics=[warning("renewed")])

    def close_ephemeral(self, type_name, private):
        if private == b"bad":
            raise ValueError("revoke failed")
        Tokens.closed.append(private)


class EphemeralGlue(unittest.TestCase):
    def setUp(self):
        self.provider = make_exports(Tokens, types, abi)
        self.p = self.provider()
        self.e = make_ephemeral_exports(self.provider, eph_abi)()
        self.assertEqual(self.p.configure(encode(None, types)), [])

    def open(self, audience):
        return self.e.open("token", encode({"audience": audience, "value": None}, types))

    def test_schemas_list_the_declared_types(self):
        (name, s), = self.e.schemas()
        self.assertEqual((name, s.version), ("token", 0))
        self.assertEqual(sorted(a.name for a in s.blocks[0].attributes), ["audience", "value"])
        self.assertEqual(dict(self.p.schema().resources), {}, "ephemeral types are no resources")
        self.assertEqual(make_ephemeral_exports(make_exports(Echo, types, abi), eph_abi)().schemas(), [],
                         "a provider declaring none answers an empty list")

    def test_open_answers_result_private_and_renew_at(self):
        resp = self.open("db")
        self.assertEqual(resp.diagnostics, [])
        self.assertEqual(decode(resp.result, types), {"audience": "db", "value": "t-db"})
        marks = {n: resp.result.nodes[i].sensitive for n, i in resp.result.nodes[0].kind.value}
        self.assertTrue(marks["value"], "the schema's sensitive attribute is marked")
        self.assertEqual(resp.private, b"0")
        self.assertEqual(resp.renew_at, 1893456000000)
        plain = self.open("plain")
        self.assertEqual((decode(plain.result, types)["value"], plain.private, plain.renew_at), ("p", b"", None))

    def test_renew_and_close(self):
        resp = self.e.renew("token", b"4")
        self.assertEqual((resp.private, resp.renew_at), (b"5", 5000))
        self.assertEqual((resp.diagnostics[0].summary, resp.diagnostics[0].severity),
                         ("renewed", types.Severity.WARNING))
        self.assertEqual(self.e.close("token", b"5"), [])
        self.assertEqual(Tokens.closed[-1], b"5")

    def test_exceptions_become_diagnostics_with_paths(self):
        diags = self.e.validate("token", encode({"audience": "", "value": None}, types))
        self.assertEqual((diags[0].summary, diags[0].path), ("empty audience", [types.PathStep_Attribute("audience")]))
        self.assertEqual(self.e.validate("token", encode({"audience": Unknown(), "value": None}, types)), [])

        resp = self.open("boom")
        self.assertEqual(resp.diagnostics[0].summary, "Provider bug: RuntimeError: cannot reach the token service")
        self.assertIn("Traceback", resp.diagnostics[0].detail)
        self.assertIsNone(decode(resp.result, types))
        self.assertEqual(self.open("unknown").diagnostics[0].summary,
                         "Provider bug: the opened result has an unknown value")

        resp = self.e.renew("token", b"bad")
        self.assertEqual((resp.diagnostics[0].summary, resp.private, resp.renew_at), ("lease gone", b"bad", None))
        diags = self.e.close("token", b"bad")
        self.assertEqual((diags[0].summary, diags[0].severity),
                         ("Provider bug: ValueError: revoke failed", types.Severity.ERROR))
        self.assertEqual(self.e.open("nope", encode(None, types)).diagnostics[0].summary,
                         "Unknown ephemeral resource type `nope`")

    def test_bad_renew_at_and_calls_before_configure_are_diagnosed(self):
        class Naive(Tokens):
            def open_ephemeral(self, type_name, config):
                return OpenResponse(config, renew_at=datetime.datetime(2030, 1, 1))
        provider = make_exports(Naive, types, abi)
        e = make_ephemeral_exports(provider, eph_abi)()
        self.assertEqual(e.close("token", b"")[0].summary, "Provider not configured")
        provider().configure(encode(None, types))
        self.assertIn("naive datetime", e.open("token", encode({"audience": "a", "value": "v"}, types))
                      .diagnostics[0].summary)

    def test_export_refuses_ephemeral_types_built_without_the_sdk_world(self):
        # As if the bindings were made for `provider-world`: no
        # `wit_world.exports.ephemeral_resources`.
        import sys
        import wit_world.exports as exports
        name = "wit_world.exports.ephemeral_resources"
        saved = sys.modules[name]
        try:
            del exports.ephemeral_resources
            sys.modules[name] = None
            expected = r"Tokens declares ephemeral resources \(token\).*-w python-provider"
            with self.assertRaisesRegex(TypeError, expected):
                export(Tokens)
            self.assertTrue(isinstance(export(Echo), type), "a provider without them builds as before")
        finally:
            sys.modules[name] = saved
            exports.ephemeral_resources = saved

    def test_ephemeral_schema_mistakes_are_found(self):
        bad = ProviderSchema(ephemeral_resources={"t": Schema(0, attributes={"a": Attr(STRING)})})
        self.assertIn("ephemeral resource t: attribute `a` is none of required, optional and computed", bad.check())


if __name__ == "__main__":
    unittest.main()
