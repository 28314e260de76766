// Unit tests of the JavaScript SDK, under Node: `node --test providers/sdk-js/test/`.
// Run by the e2e test `javascript::js_sdk_unit_tests_pass`.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BOOL, NUMBER, STRING, Key, ProviderError, Sensitive, Tuple, Unknown, ValueSet, WireError, checkSchema, decode,
  encode, equal, exportEphemeralResources, exportProvider, listOf, mapOf, objectOf, openResponse, planFromProposed,
  warning,
} from "../cairn-provider.js";

const roundtrip = (v, opts) => decode(encode(v), opts);

test("every kind round-trips", () => {
  const v = {
    n: null, b: true, i: -(2n ** 63n), f: 0.5, s: "é", l: [1, 2], set: ValueSet.from(["a", "b"]),
    m: new Map([["k", "v"]]), t: Tuple.from([1, "x"]), u: new Unknown(), o: { deep: [{ x: 1 }] },
  };
  const back = roundtrip(v);
  assert.ok(equal(back, v));
  assert.ok(back.set instanceof ValueSet);
  assert.ok(back.m instanceof Map);
  assert.ok(back.t instanceof Tuple);
  assert.equal(back.i, -(2n ** 63n), "integers beyond 2^53 come back as BigInt");
  assert.equal(decode({ nodes: [] }), null, "an empty node list is null");
});

test("whole numbers travel as integers, others as floats", () => {
  const w = encode([3, 3.0, 0.1, 2n ** 62n]);
  assert.deepEqual(w.nodes.slice(1).map((n) => n.kind.tag), ["integer", "integer", "float", "integer"]);
  assert.throws(() => encode(NaN), WireError);
  assert.throws(() => encode(2n ** 64n), /outside the 64-bit integer range/);
});

test("refinements travel", () => {
  const u = new Unknown({ prefix: "arn:", lower: 1, upper: 9.5, upperInclusive: false, minLength: 2, maxLength: 2 });
  const back = roundtrip(u);
  assert.deepEqual(back, u);
  assert.ok(back.notNull, "a prefix implies not null");
  const r = encode(u).nodes[0].kind.val;
  assert.deepEqual(r.lower, { value: { tag: "integer", val: 1n }, inclusive: true });
  assert.equal(r.maxLength, 2n);
});

test("sensitive marks from wrappers and the schema", () => {
  const w = encode({ a: new Sensitive("x"), b: "y", c: ["z"] }, new Set(["c"]));
  const marks = Object.fromEntries(w.nodes[0].kind.val.map(([n, i]) => [n, w.nodes[i].sensitive]));
  assert.deepEqual(marks, { a: true, b: false, c: true });
  assert.equal(decode(w).a, "x");
  assert.ok(decode(w, { keepMarks: true }).a instanceof Sensitive);
});

test("malformed values are refused, saying where", () => {
  assert.throws(() => decode({ nodes: [{ kind: { tag: "list", val: [0] }, sensitive: false }] }), /reached twice/);
  assert.throws(() => decode({ nodes: [{ kind: { tag: "object", val: [["a", 5]] }, sensitive: false }] }), /value\.a: node index 5/);
  assert.throws(() => encode({ x: new Date() }), /value\.x: a Date has no cairn value/);
});

const SCHEMA = {
  version: 1,
  attributes: {
    name: { type: STRING, required: true },
    size: { type: NUMBER, optional: true, computed: true },
    tags: { type: mapOf(STRING), optional: true },
    secret: { type: STRING, computed: true, sensitive: true },
    password: { type: STRING, optional: true, writeOnly: true },
    rules: { nested: { nesting: "list", block: { attributes: { port: { type: NUMBER, required: true } } } }, optional: true },
    id: { type: STRING, computed: true },
  },
  blocks: { limit: { nesting: "single", block: { attributes: { max: { type: BOOL, optional: true } } }, maxItems: 1 } },
};

const obj = (attrs) => ({ name: null, size: null, tags: null, secret: null, password: null, rules: null, id: null, limit: null, ...attrs });

const echo = () => exportProvider({
  schema: {
    resources: { echo: SCHEMA },
    dataSources: { echo: { attributes: { in: { type: listOf(objectOf({ a: STRING })), required: true }, out: { type: STRING, computed: true } } } },
  },
  configure(config) { this.greeting = config?.greeting ?? "hi"; },
  validate(_t, config) { if (config.name === "") throw new ProviderError("empty name", { path: ["rules", 0, new Key("k")] }); },
  plan(req) { return planFromProposed(req).default("size", 1).requiresReplace("name"); },
  async apply(req) {
    if (req.isDelete) return null;
    if (req.plannedState.name === "boom") throw new RangeError("boom");
    return { ...req.plannedState, secret: this.greeting, id: req.idempotencyKey };
  },
  async readDataSource(_t, config) { return { ...config, out: config.in.map((x) => x.a).join(",") }; },
});

const planReq = (prior, config) => {
  const proposed = { ...config };
  for (const n of ["size", "secret", "id"]) if (config[n] == null && prior) proposed[n] = prior[n];
  return { typeName: "echo", priorState: encode(prior), proposedNewState: encode(proposed), config: encode(config), priorPrivate: new Uint8Array() };
};

test("the schema flattens and mistakes are found", () => {
  const p = echo();
  const s = new Map(p.schema().resources).get("echo");
  assert.equal(s.version, 1n);
  assert.equal(s.blocks.length, 3);
  assert.equal(s.blocks[0].attributes.find((a) => a.name === "rules").nested.nesting, "list");
  assert.deepEqual(s.blocks[0].attributes.find((a) => a.name === "tags").type.nodes, [{ tag: "map", val: 1 }, { tag: "text" }]);
  const errors = checkSchema({ resources: { x: { attributes: { a: { type: STRING }, b: { type: STRING, required: true, computed: true } } } } });
  assert.deepEqual(errors, [
    "resource x: attribute `a` is none of required, optional and computed",
    "resource x: attribute `b` is required, so it cannot also be optional or computed",
  ]);
  assert.throws(() => exportProvider({ schema: { resources: { x: { attributes: { a: { type: "str", required: true } } } } } }), /not a cairn type/);
});

test("plan: create, update and replace", async () => {
  const p = echo();
  assert.deepEqual(await p.configure(encode(null)), []);
  const created = await p.planResource(planReq(null, obj({ name: "a", password: "pw" })));
  assert.deepEqual(created.diagnostics, []);
  const planned = decode(created.plannedState);
  assert.equal(planned.size, 1);
  assert.ok(planned.id instanceof Unknown);
  assert.equal(planned.password, null, "write-only attributes are planned null");
  assert.deepEqual(created.requiresReplace, [[{ tag: "attribute", val: "name" }]]);
  const prior = obj({ name: "a", size: 1, secret: "s", id: "i" });
  assert.equal(decode((await p.planResource(planReq(prior, obj({ name: "a" })))).plannedState).id, "i");
  const replaced = decode((await p.planResource(planReq(prior, obj({ name: "b" })))).plannedState);
  assert.ok(replaced.id instanceof Unknown, "a replacement is a new object");
  assert.equal(replaced.size, 1, "defaults stay known");
});

test("apply, errors and paths become diagnostics", async () => {
  const p = echo();
  const before = await p.validateResource("echo", encode(obj({ name: "" })));
  assert.equal(before[0].summary, "Provider not configured");
  await p.configure(encode({ greeting: "hey" }));
  const apply = (planned) => p.applyResource({ typeName: "echo", priorState: encode(null), plannedState: encode(planned), config: encode(planned), plannedPrivate: new Uint8Array(), idempotencyKey: "key-1" });
  const ok = await apply(obj({ name: "a", secret: new Unknown(), id: new Unknown() }));
  assert.deepEqual(ok.diagnostics, []);
  assert.equal(decode(ok.newState).secret, "hey", "configure's state is kept");
  const boom = await apply(obj({ name: "boom" }));
  assert.equal(boom.diagnostics[0].summary, "Provider bug: RangeError: boom");
  assert.equal(decode(boom.newState), null, "a failed create records nothing");
  const diags = await p.validateResource("echo", encode(obj({ name: "" })));
  assert.deepEqual(diags[0].path, [{ tag: "attribute", val: "rules" }, { tag: "index", val: 0n }, { tag: "key", val: "k" }]);
  assert.equal(diags[0].severity, "error");
  assert.match((await p.validateResource("nope", encode(null)))[0].summary, /nope/);
});

test("read, import, data sources and upgrade", async () => {
  const p = echo();
  await p.configure(encode(null));
  const read = await p.readResource({ typeName: "echo", currentState: encode(obj({ name: "a" })), private: new Uint8Array([7]) });
  assert.deepEqual(decode(read.newState), obj({ name: "a" }));
  assert.deepEqual(read.private, new Uint8Array([7]));
  assert.match((await p.importResource("echo", "x")).diagnostics[0].summary, /import/);
  const data = await p.readDataSource("echo", encode({ in: [{ a: "x" }, { a: "y" }], out: null }));
  assert.equal(decode(data.state).out, "x,y");
  const up = await p.upgradeState("echo", 1n, '{"name": "a", "tags": {"k": "v"}}');
  assert.deepEqual(up.diagnostics, []);
  assert.ok(decode(up.upgradedState).tags instanceof Map);
  assert.match((await p.upgradeState("echo", 0n, "{}")).diagnostics[0].summary, /version 0/);
});

// --- ephemeral resources ---

const closed = [];
const text = (bytes) => new TextDecoder().decode(bytes);

// Ephemeral `token`s whose private bytes count renewals.
const tokens = () => {
  const provider = exportProvider({
    schema: {
      ephemeralResources: {
        token: { attributes: { audience: { type: STRING, required: true }, value: { type: STRING, computed: true, sensitive: true } } },
      },
    },
    configure() { this.prefix = "t-"; },
    validateEphemeral(_t, config) { if (config.audience === "") throw new ProviderError("empty audience", { path: ["audience"] }); },
    async openEphemeral(_t, config) {
      if (config.audience === "boom") throw new TypeError("cannot reach the token service");
      if (config.audience === "plain") return { ...config, value: "p" };
      if (config.audience === "unknown") return { ...config, value: new Unknown() };
      if (config.audience === "bad-time") return openResponse(config, { renewAt: "soon" });
      return openResponse({ ...config, value: this.prefix + config.audience }, { private: "0", renewAt: new Date(Date.UTC(2030, 0, 1)) });
    },
    renewEphemeral(_t, priv) {
      if (text(priv) === "bad") throw new ProviderError("lease gone");
      const n = Number(text(priv)) + 1;
      return { private: String(n), renewAt: 1000 * n, diagnostics: [warning("renewed")] };
    },
    closeEphemeral(_t, priv) {
      if (text(priv) === "bad") throw new RangeError("revoke failed");
      closed.push(text(priv));
    },
  });
  return { provider, ephemeral: exportEphemeralResources(provider) };
};

const open = (e, audience) => e.open("token", encode({ audience, value: null }));

test("ephemeral: schemas list the declared types, none for a provider declaring none", async () => {
  const { provider, ephemeral } = tokens();
  const [[name, s]] = ephemeral.schemas();
  assert.equal(name, "token");
  assert.deepEqual(s.blocks[0].attributes.map((a) => a.name), ["audience", "value"]);
  assert.deepEqual(provider.schema().resources, [], "ephemeral types are no resources");
  assert.deepEqual(exportEphemeralResources(echo()).schemas(), []);
  assert.throws(() => exportEphemeralResources({}), /the object exportProvider returned/);
  assert.deepEqual(checkSchema({ ephemeralResources: { t: { attributes: { a: { type: STRING } } } } }),
    ["ephemeral resource t: attribute `a` is none of required, optional and computed"]);
});

test("ephemeral: open answers result, private bytes and renewAt; renew and close", async () => {
  const { provider, ephemeral } = tokens();
  assert.equal((await ephemeral.close("token", new Uint8Array()))[0].summary, "Provider not configured");
  await provider.configure(encode(null));
  const opened = await open(ephemeral, "db");
  assert.deepEqual(opened.diagnostics, []);
  assert.deepEqual(decode(opened.result), { audience: "db", value: "t-db" });
  const marks = Object.fromEntries(opened.result.nodes[0].kind.val.map(([n, i]) => [n, opened.result.nodes[i].sensitive]));
  assert.ok(marks.value, "the schema's sensitive attribute is marked");
  assert.equal(text(opened.private), "0");
  assert.equal(opened.renewAt, 1893456000000n);
  const plain = await open(ephemeral, "plain");
  assert.deepEqual([decode(plain.result).value, plain.private.length, plain.renewAt], ["p", 0, undefined]);

  const renewed = await ephemeral.renew("token", new TextEncoder().encode("4"));
  assert.deepEqual([text(renewed.private), renewed.renewAt], ["5", 5000n]);
  assert.deepEqual([renewed.diagnostics[0].summary, renewed.diagnostics[0].severity], ["renewed", "warning"]);
  assert.deepEqual(await ephemeral.close("token", renewed.private), []);
  assert.equal(closed.at(-1), "5");
});

test("ephemeral: throws become diagnostics with paths, never traps", async () => {
  const { provider, ephemeral } = tokens();
  await provider.configure(encode(null));
  const diags = await ephemeral.validate("token", encode({ audience: "", value: null }));
  assert.deepEqual([diags[0].summary, diags[0].path], ["empty audience", [{ tag: "attribute", val: "audience" }]]);
  assert.deepEqual(await ephemeral.validate("token", encode({ audience: new Unknown(), value: null })), []);

  const boom = await open(ephemeral, "boom");
  assert.equal(boom.diagnostics[0].summary, "Provider bug: TypeError: cannot reach the token service");
  assert.equal(decode(boom.result), null);
  assert.equal((await open(ephemeral, "unknown")).diagnostics[0].summary, "Provider bug: the opened result has an unknown value");
  assert.match((await open(ephemeral, "bad-time")).diagnostics[0].summary, /renewAt is soon/);

  const bad = new TextEncoder().encode("bad");
  const renewed = await ephemeral.renew("token", bad);
  assert.deepEqual([renewed.diagnostics[0].summary, renewed.private, renewed.renewAt], ["lease gone", bad, undefined]);
  const closing = await ephemeral.close("token", bad);
  assert.deepEqual([closing[0].summary, closing[0].severity], ["Provider bug: RangeError: revoke failed", "error"]);
  assert.equal((await ephemeral.open("nope", encode(null))).diagnostics[0].summary, "Unknown ephemeral resource type `nope`");
});
