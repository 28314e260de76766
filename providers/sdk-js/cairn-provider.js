// cairn provider SDK for JavaScript (componentize-js).
//
// Turns the flattened WIT values (a node list, root first) into ordinary
// JavaScript values and back, declares schemas as plain objects, and turns
// thrown errors into diagnostics. Nothing here imports the WIT: the module
// runs under Node for its unit tests; `log.js` is the one part that needs
// the component.
//
//   wire node          JavaScript value
//   ---------          ----------------
//   null               null (undefined is sent as null)
//   unknown(refs)      Unknown (refinements kept)
//   boolean            boolean
//   integer            number, or BigInt outside ±2^53
//   float              number
//   text               string
//   list               Array
//   set                ValueSet (an Array whose order means nothing); a JS Set is sent as a set
//   map                Map (string keys)
//   object             plain object
//   tuple              Tuple (an Array)
//   sensitive mark     Sensitive(value) when sending; see decode's keepMarks

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** A value only apply can tell; its refinements say what is already known. */
export class Unknown {
  /**
   * @param {{notNull?: boolean, prefix?: string, lower?: number, lowerInclusive?: boolean,
   *          upper?: number, upperInclusive?: boolean, minLength?: number, maxLength?: number}} refinements
   */
  constructor(refinements = {}) {
    this.prefix = refinements.prefix ?? null;
    this.notNull = Boolean(refinements.notNull) || this.prefix !== null;
    this.lower = refinements.lower ?? null;
    this.lowerInclusive = refinements.lowerInclusive ?? true;
    this.upper = refinements.upper ?? null;
    this.upperInclusive = refinements.upperInclusive ?? true;
    this.minLength = refinements.minLength ?? null;
    this.maxLength = refinements.maxLength ?? null;
  }
}

/** Marks a value (and everything inside it) secret: the host redacts it. */
export class Sensitive {
  constructor(value) {
    this.value = value;
  }
}

/** A set value: an Array whose order carries no meaning. */
export class ValueSet extends Array {}

/** A tuple value: a fixed-length Array, each element of its own type. */
export class Tuple extends Array {}

/** A map key as a step of an attribute path (a string step is an attribute, a number an index). */
export class Key {
  constructor(key) {
    this.key = String(key);
  }
}

/** A malformed value on the wire, or a JavaScript value with no cairn value. */
export class WireError extends Error {}

/** Fail the call with one error diagnostic on `path`. */
export class ProviderError extends Error {
  /** @param {string} summary @param {{detail?: string, path?: Array}} [options] */
  constructor(summary, { detail = "", path = [] } = {}) {
    super(summary);
    this.diagnostic = { severity: "error", summary, detail, path };
  }
}

/** Fail the call with several diagnostics (`{severity, summary, detail, path}`). */
export class Diagnostics extends Error {
  constructor(diagnostics) {
    super(diagnostics.map((d) => d.summary).join("; "));
    this.diagnostics = diagnostics;
  }
}

/** A warning, for a response's `diagnostics`. */
export function warning(summary, { detail = "", path = [] } = {}) {
  return { severity: "warning", summary, detail, path };
}

/** `value` without its Sensitive mark, if it has one. */
export function unwrap(value) {
  return value instanceof Sensitive ? value.value : value;
}

function isPlainObject(v) {
  return v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype;
}

/** The path of the first unknown inside `value`, or null. */
export function findUnknown(value, path = []) {
  value = unwrap(value);
  if (value instanceof Unknown) return path;
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const found = findUnknown(v, [...path, new Key(k)]);
      if (found) return found;
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnknown(value[i], [...path, i]);
      if (found) return found;
    }
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = findUnknown(v, [...path, k]);
      if (found) return found;
    }
  }
  return null;
}

/** Value equality as the host sees it: sets unordered, numbers by value, marks ignored. */
export function equal(a, b) {
  a = unwrap(a);
  b = unwrap(b);
  if (typeof a === "bigint" || typeof b === "bigint") {
    return (typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")
      && Number.isInteger(Number(a)) && BigInt(a) === BigInt(b);
  }
  if (a instanceof ValueSet || b instanceof ValueSet) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    const rest = [...b];
    return a.every((x) => {
      const i = rest.findIndex((y) => equal(x, y));
      return i >= 0 && rest.splice(i, 1);
    });
  }
  if (a instanceof Map && b instanceof Map) {
    return a.size === b.size && [...a].every(([k, v]) => b.has(k) && equal(v, b.get(k)));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
  }
  if (a instanceof Unknown && b instanceof Unknown) return JSON.stringify(a) === JSON.stringify(b);
  return a === b || (a == null && b == null);
}

// --- decoding ----------------------------------------------------------------

/** The JavaScript value of a wire `value` ({nodes}); an empty node list is null. */
export function decode(wire, { keepMarks = false } = {}) {
  const nodes = wire.nodes;
  if (nodes.length === 0) return null;
  const seen = new Set();
  const node = (index, where) => {
    if (!(index >= 0 && index < nodes.length)) {
      throw new WireError(`${where}: node index ${index} is out of range (the value has ${nodes.length} nodes)`);
    }
    if (seen.has(index)) throw new WireError(`${where}: node ${index} is reached twice (a cycle or a shared node)`);
    seen.add(index);
    const v = kind(nodes[index].kind, where);
    return keepMarks && nodes[index].sensitive ? new Sensitive(v) : v;
  };
  const kind = (k, where) => {
    switch (k.tag) {
      case "null":
        return null;
      case "unknown":
        return decodeRefinements(k.val);
      case "boolean":
      case "text":
        return k.val;
      case "integer": {
        const n = BigInt(k.val);
        return n >= -(2n ** 53n) && n <= 2n ** 53n ? Number(n) : n;
      }
      case "float":
        if (!Number.isFinite(k.val)) throw new WireError(`${where}: the number ${k.val} is not finite`);
        return k.val;
      case "list":
        return k.val.map((c, i) => node(c, `${where}[${i}]`));
      case "set":
        return ValueSet.from(k.val.map((c, i) => node(c, `${where}[${i}]`)));
      case "tuple":
        return Tuple.from(k.val.map((c, i) => node(c, `${where}[${i}]`)));
      case "map": {
        const m = new Map();
        for (const [name, c] of k.val) {
          if (m.has(name)) throw new WireError(`${where}: the key ${JSON.stringify(name)} appears twice`);
          m.set(name, node(c, `${where}[${JSON.stringify(name)}]`));
        }
        return m;
      }
      case "object": {
        const o = {};
        for (const [name, c] of k.val) {
          if (Object.hasOwn(o, name)) throw new WireError(`${where}: the attribute ${name} appears twice`);
          o[name] = node(c, `${where}.${name}`);
        }
        return o;
      }
      default:
        throw new WireError(`${where}: unexpected node kind ${JSON.stringify(k.tag)}`);
    }
  };
  return node(0, "value");
}

function decodeRefinements(r) {
  const num = (b) => (b == null ? null : b.value.tag === "integer" ? Number(b.value.val) : b.value.val);
  return new Unknown({
    notNull: r.notNull,
    prefix: r.prefix ?? null,
    lower: num(r.lower),
    lowerInclusive: r.lower?.inclusive ?? true,
    upper: num(r.upper),
    upperInclusive: r.upper?.inclusive ?? true,
    minLength: r.minLength == null ? null : Number(r.minLength),
    maxLength: r.maxLength == null ? null : Number(r.maxLength),
  });
}

// --- encoding ----------------------------------------------------------------

function number(n, where) {
  if (typeof n === "bigint") {
    if (n < I64_MIN || n > I64_MAX) throw new WireError(`${where}: ${n} is outside the 64-bit integer range`);
    return { tag: "integer", val: n };
  }
  if (!Number.isFinite(n)) throw new WireError(`${where}: the number ${n} is not finite (cairn numbers are finite)`);
  // Whole numbers travel as integers so that 3.0 and 3 are the same value.
  if (Number.isInteger(n) && BigInt(n) >= I64_MIN && BigInt(n) <= I64_MAX) return { tag: "integer", val: BigInt(n) };
  return { tag: "float", val: n };
}

/**
 * The wire `value` of a JavaScript value. Top-level attributes named in
 * `sensitiveAttrs` (the schema's sensitive ones) are marked sensitive.
 */
export function encode(value, sensitiveAttrs = new Set()) {
  const nodes = [];
  const put = (v, sensitive, where) => {
    if (v instanceof Sensitive) return put(v.value, true, where);
    const at = nodes.length;
    nodes.push(null); // reserved: the root first, children after
    nodes[at] = { kind: kind(v, where), sensitive };
    return at;
  };
  const items = (list, where) => list.map((x, i) => put(x, false, `${where}[${i}]`));
  const kind = (v, where) => {
    if (v === null || v === undefined) return { tag: "null" };
    if (v instanceof Unknown) return { tag: "unknown", val: encodeRefinements(v, where) };
    if (typeof v === "boolean") return { tag: "boolean", val: v };
    if (typeof v === "number" || typeof v === "bigint") return number(v, where);
    if (typeof v === "string") return { tag: "text", val: v };
    if (v instanceof ValueSet) return { tag: "set", val: items([...v], where) };
    if (v instanceof Set) return { tag: "set", val: items([...v], where) };
    if (v instanceof Tuple) return { tag: "tuple", val: items([...v], where) };
    if (Array.isArray(v)) return { tag: "list", val: items(v, where) };
    if (v instanceof Map) {
      const entries = [];
      for (const [k, x] of v) {
        if (typeof k !== "string") throw new WireError(`${where}: map key ${String(k)} is not a string`);
        entries.push([k, put(x, false, `${where}[${JSON.stringify(k)}]`)]);
      }
      return { tag: "map", val: entries };
    }
    if (isPlainObject(v)) {
      const top = where === "value";
      return {
        tag: "object",
        val: Object.entries(v).map(([k, x]) => [k, put(x, top && sensitiveAttrs.has(k), `${where}.${k}`)]),
      };
    }
    throw new WireError(
      `${where}: a ${v?.constructor?.name ?? typeof v} has no cairn value (use null, boolean, number, BigInt, ` +
        "string, Array, ValueSet, Set, Tuple, Map, a plain object, Unknown or Sensitive)",
    );
  };
  put(value, false, "value");
  return { nodes };
}

function encodeRefinements(u, where) {
  const bound = (n, inclusive) => (n == null ? undefined : { value: number(n, where), inclusive });
  const len = (n) => (n == null ? undefined : BigInt(n));
  return {
    notNull: u.notNull,
    prefix: u.prefix ?? undefined,
    lower: bound(u.lower, u.lowerInclusive),
    upper: bound(u.upper, u.upperInclusive),
    minLength: len(u.minLength),
    maxLength: len(u.maxLength),
  };
}

// --- schemas -------------------------------------------------------------------

/** Types: BOOL, NUMBER, STRING, DYNAMIC, and listOf, setOf, mapOf, objectOf, tupleOf. */
export const BOOL = { kind: "boolean" };
export const NUMBER = { kind: "number" };
export const STRING = { kind: "text" };
export const DYNAMIC = { kind: "dynamic" };
/** A list of `t`. */
export const listOf = (t) => ({ kind: "list", of: t });
/** A set of `t`. */
export const setOf = (t) => ({ kind: "set", of: t });
/** A map from strings to `t`. */
export const mapOf = (t) => ({ kind: "map", of: t });
/** An object with exactly these attributes ({name: type}). */
export const objectOf = (attrs) => ({ kind: "object", attrs });
/** A tuple with exactly these element types. */
export const tupleOf = (elements) => ({ kind: "tuple", elements });

const NESTINGS = ["single", "list", "set", "map"];

function typeToWire(t, where) {
  const nodes = [];
  const put = (t) => {
    const at = nodes.length;
    nodes.push(null);
    switch (t?.kind) {
      case "boolean":
      case "number":
      case "text":
      case "dynamic":
        nodes[at] = { tag: t.kind };
        break;
      case "list":
      case "set":
      case "map":
        nodes[at] = { tag: t.kind, val: put(t.of) };
        break;
      case "object":
        nodes[at] = { tag: "object", val: Object.entries(t.attrs).map(([n, x]) => [n, put(x)]) };
        break;
      case "tuple":
        nodes[at] = { tag: "tuple", val: t.elements.map(put) };
        break;
      default:
        throw new TypeError(`${where}: ${JSON.stringify(t)} is not a cairn type (use STRING, listOf(...), ...)`);
    }
    return at;
  };
  put(t);
  return { nodes };
}

/** Appends a message to `errors` for each declaration mistake in `block`. */
function checkBlock(block, where, errors, nestedAttr = false) {
  for (const [name, a] of Object.entries(block.attributes ?? {})) {
    const at = `${where}: attribute \`${name}\``;
    if ((a.type === undefined) === (a.nested === undefined)) errors.push(`${at} needs exactly one of type and nested`);
    if (a.nested) {
      if (!NESTINGS.includes(a.nested.nesting)) errors.push(`${at} has nesting ${a.nested.nesting}; use one of ${NESTINGS}`);
      checkBlock(a.nested.block ?? {}, `${at} (nested)`, errors, true);
    }
    if (!a.required && !a.optional && !a.computed) errors.push(`${at} is none of required, optional and computed`);
    if (a.required && (a.optional || a.computed)) errors.push(`${at} is required, so it cannot also be optional or computed`);
    if (a.writeOnly && a.computed) errors.push(`${at} is write-only, so it cannot be computed`);
    if (a.type !== undefined) {
      try {
        typeToWire(a.type, at);
      } catch (e) {
        errors.push(e.message);
      }
    }
  }
  for (const [name, b] of Object.entries(block.blocks ?? {})) {
    const at = `${where}: block \`${name}\``;
    if (nestedAttr) errors.push(`${at}: a nested attribute type holds attributes only, not blocks`);
    if (Object.hasOwn(block.attributes ?? {}, name)) errors.push(`${at} has the name of an attribute`);
    if (!NESTINGS.includes(b.nesting)) errors.push(`${at} has nesting ${b.nesting}; use one of ${NESTINGS}`);
    if (b.maxItems && (b.minItems ?? 0) > b.maxItems) errors.push(`${at} has minItems above maxItems`);
    checkBlock(b.block ?? {}, at, errors);
  }
}

/** The declaration mistakes of a provider schema ({provider, resources, dataSources, ephemeralResources}); empty when sound. */
export function checkSchema(schema) {
  const errors = [];
  checkBlock(schema.provider ?? {}, "provider", errors);
  const tables = [["resource", schema.resources], ["data source", schema.dataSources], ["ephemeral resource", schema.ephemeralResources]];
  for (const [kind, table] of tables) {
    for (const [name, s] of Object.entries(table ?? {})) checkBlock(s, `${kind} ${name}`, errors);
  }
  return errors;
}

function schemaToWire(s) {
  const blocks = [];
  const flatten = (block) => {
    const at = blocks.length;
    blocks.push(null);
    const attributes = Object.entries(block.attributes ?? {}).map(([name, a]) => ({
      name,
      type: a.nested ? { nodes: [] } : typeToWire(a.type, name),
      nested: a.nested ? { nesting: a.nested.nesting, block: flatten(a.nested.block) } : undefined,
      required: Boolean(a.required),
      optional: Boolean(a.optional),
      computed: Boolean(a.computed),
      sensitive: Boolean(a.sensitive),
      writeOnly: Boolean(a.writeOnly),
      description: a.description ?? "",
    }));
    const nested = Object.entries(block.blocks ?? {}).map(([name, b]) => ({
      name,
      nesting: b.nesting,
      block: flatten(b.block),
      minItems: b.minItems ?? 0,
      maxItems: b.maxItems ?? 0,
    }));
    blocks[at] = { attributes, blocks: nested, description: block.description ?? "" };
    return at;
  };
  flatten(s);
  return { version: BigInt(s.version ?? 0), blocks };
}

const attrsWhere = (s, flag) => Object.entries(s.attributes ?? {}).filter(([, a]) => a[flag]).map(([n]) => n);

// --- planning --------------------------------------------------------------------

/**
 * The default plan of `req`: the proposed new state with write-only
 * attributes null; on create, every computed attribute the configuration
 * leaves null is unknown. Chain `.default(name, v)`, `.requiresReplace(...)`,
 * `.set(name, v)`.
 */
export function planFromProposed(req) {
  const planned = { ...(req.proposedNewState ?? {}) };
  for (const n of attrsWhere(req.schema, "writeOnly")) planned[n] = null;
  const config = req.config ?? {};
  let free = attrsWhere(req.schema, "computed").filter((n) => config[n] == null);
  const markFree = () => {
    for (const n of free) planned[n] = new Unknown();
  };
  if (req.priorState == null) markFree();
  const plan = {
    plannedState: planned,
    // Attribute paths (arrays of steps) whose change replaces the object.
    replacePaths: [],
    plannedPrivate: req.priorPrivate ?? new Uint8Array(),
    diagnostics: [],
    /** Use `value` for optional+computed `name` when the configuration leaves it null. */
    default(name, value) {
      if (config[name] == null) {
        planned[name] = value;
        free = free.filter((n) => n !== name);
      }
      return plan;
    },
    /** Changing any of these replaces the object (and makes free computed attributes unknown). */
    requiresReplace(...names) {
      let replacing = false;
      for (const n of names) {
        plan.replacePaths.push([n]);
        if (req.priorState != null && !equal(req.priorState[n], planned[n])) replacing = true;
      }
      if (replacing) {
        markFree();
        free = [];
      }
      return plan;
    },
    /** Set the planned value of top-level attribute `name`. */
    set(name, value) {
      planned[name] = value;
      return plan;
    },
  };
  return plan;
}

// --- the exported interface ---------------------------------------------------------

function pathToWire(path) {
  return path.map((s) => {
    if (s instanceof Key) return { tag: "key", val: s.key };
    if (typeof s === "number" || typeof s === "bigint") return { tag: "index", val: BigInt(s) };
    return { tag: "attribute", val: String(s) };
  });
}

function diagToWire(d) {
  return {
    severity: d.severity === "warning" ? "warning" : "error",
    summary: String(d.summary),
    detail: String(d.detail ?? ""),
    path: pathToWire(d.path ?? []),
  };
}

function diagnosticsOf(e) {
  if (e instanceof ProviderError) return [e.diagnostic];
  if (e instanceof Diagnostics) return e.diagnostics;
  if (e instanceof WireError) return [{ severity: "error", summary: "Provider bug: a value cannot be sent to the host", detail: e.message }];
  // A bug: say where, since the user will paste this into an issue.
  return [{ severity: "error", summary: `Provider bug: ${e?.name ?? "Error"}: ${e?.message ?? String(e)}`, detail: String(e?.stack ?? "") }];
}

/**
 * The `provider` export for a provider definition:
 * `export const provider = exportProvider({ schema, configure, validate, plan, apply, read,
 * readDataSource, importResource, upgradeState })`. Only `schema` is required; every method may
 * be async (componentize-js runs the event loop until the promise settles).
 */
export function exportProvider(def) {
  const errors = def.schema ? checkSchema(def.schema) : ["the definition has no `schema`"];
  if (errors.length) throw new TypeError(`invalid provider schema:\n  ${errors.join("\n  ")}`);
  const schema = def.schema;
  // The configured provider of this component instance (set by configure).
  let configured = null;

  const ready = () => {
    if (configured === null) {
      throw new ProviderError("Provider not configured", { detail: "The host called the provider before `configure`." });
    }
    return configured;
  };
  const resourceSchema = (typeName) => {
    const s = schema.resources?.[typeName];
    if (!s) throw new ProviderError(`Unknown resource type \`${typeName}\``);
    return s;
  };
  const valueIn = (v, what) => {
    try {
      return decode(v);
    } catch (e) {
      throw new ProviderError(`Malformed ${what} from the host`, { detail: e.message });
    }
  };
  const sensitive = (s) => new Set(attrsWhere(s, "sensitive"));
  const knownCheck = (state, diags, what = "the new state", who = "Apply") => {
    const path = findUnknown(state);
    if (path) diags.push({ severity: "error", summary: `Provider bug: ${what} has an unknown value`, detail: `${who} must set every attribute to a known value.`, path });
  };
  // Runs `call` (which returns [answer, diagnostics]); a throw becomes diagnostics and `fallback`.
  const run = async (call, fallback) => {
    try {
      const [answer, diags] = await call();
      return [answer, (diags ?? []).map(diagToWire)];
    } catch (e) {
      return [fallback, diagnosticsOf(e).map(diagToWire)];
    }
  };
  const call = (name, ...args) => (def[name] ? def[name].call(configured, ...args) : undefined);

  const exports = {
    schema() {
      const table = (t) => Object.entries(t ?? {}).map(([n, s]) => [n, schemaToWire(s)]);
      return { provider: schemaToWire(schema.provider ?? {}), resources: table(schema.resources), dataSources: table(schema.dataSources) };
    },

    async configure(config) {
      const [, diags] = await run(async () => {
        const self = {};
        const value = valueIn(config, "provider configuration");
        if (def.configure) await def.configure.call(self, value);
        configured = self;
        return [null, []];
      });
      return diags;
    },

    async validateResource(typeName, config) {
      const [, diags] = await run(async () => {
        ready();
        resourceSchema(typeName);
        return [null, (await call("validate", typeName, valueIn(config, "configuration"))) ?? []];
      });
      return diags;
    },

    async planResource(request) {
      const fallback = { plannedState: { nodes: [] }, requiresReplace: [], plannedPrivate: new Uint8Array(), diagnostics: [] };
      const [answer, diags] = await run(async () => {
        ready();
        const s = resourceSchema(request.typeName);
        const req = {
          typeName: request.typeName,
          schema: s,
          priorState: valueIn(request.priorState, "prior state"),
          proposedNewState: valueIn(request.proposedNewState, "proposed new state"),
          config: valueIn(request.config, "configuration"),
          priorPrivate: request.priorPrivate,
        };
        const plan = def.plan ? await call("plan", req) : planFromProposed(req);
        return [
          {
            plannedState: encode(plan.plannedState, sensitive(s)),
            requiresReplace: (Array.isArray(plan.requiresReplace) ? plan.requiresReplace : (plan.replacePaths ?? [])).map(pathToWire),
            plannedPrivate: plan.plannedPrivate ?? new Uint8Array(),
            diagnostics: [],
          },
          plan.diagnostics,
        ];
      }, fallback);
      answer.diagnostics = diags;
      return answer;
    },

    async applyResource(request) {
      // On failure the object is as it was: the prior state (null for a create).
      const fallback = { newState: request.priorState, private: new Uint8Array(), diagnostics: [] };
      const [answer, diags] = await run(async () => {
        ready();
        const s = resourceSchema(request.typeName);
        const planned = valueIn(request.plannedState, "planned state");
        const req = {
          typeName: request.typeName,
          schema: s,
          priorState: valueIn(request.priorState, "prior state"),
          plannedState: planned,
          config: valueIn(request.config, "configuration"),
          plannedPrivate: request.plannedPrivate,
          idempotencyKey: request.idempotencyKey,
          isDelete: planned === null,
        };
        if (!def.apply) throw new ProviderError(`Resource type \`${request.typeName}\` cannot be applied`);
        // apply returns the new state (null after a delete) or {newState, private, diagnostics}.
        const out = await call("apply", req);
        const resp = out !== null && typeof out === "object" && "newState" in out ? out : { newState: out ?? null };
        const diagnostics = [...(resp.diagnostics ?? [])];
        knownCheck(resp.newState, diagnostics);
        return [{ newState: encode(resp.newState, sensitive(s)), private: resp.private ?? new Uint8Array(), diagnostics: [] }, diagnostics];
      }, fallback);
      answer.diagnostics = diags;
      return answer;
    },

    async readResource(request) {
      // On failure keep what the host has: an error is not "gone".
      const [state, diags] = await run(async () => {
        ready();
        const s = resourceSchema(request.typeName);
        const current = valueIn(request.currentState, "current state");
        const req = { typeName: request.typeName, schema: s, currentState: current, private: request.private };
        const now = def.read ? await call("read", req) : current;
        return [now == null ? undefined : encode(now, sensitive(s)), []];
      }, request.currentState);
      return { newState: state, private: request.private, diagnostics: diags };
    },

    async importResource(typeName, id) {
      const [imported, diags] = await run(async () => {
        ready();
        const s = resourceSchema(typeName);
        if (!def.importResource) throw new ProviderError(`Resource type \`${typeName}\` does not support import`);
        const state = await call("importResource", typeName, id);
        return [[{ typeName, state: encode(state, sensitive(s)), private: new Uint8Array() }], []];
      }, []);
      return { imported, diagnostics: diags };
    },

    async readDataSource(typeName, config) {
      const [state, diags] = await run(async () => {
        ready();
        const s = schema.dataSources?.[typeName];
        if (!s) throw new ProviderError(`Unknown data source \`${typeName}\``);
        if (!def.readDataSource) throw new ProviderError(`Data source \`${typeName}\` cannot be read`);
        const out = await call("readDataSource", typeName, valueIn(config, "configuration"));
        const diagnostics = [];
        knownCheck(out, diagnostics);
        return [encode(out, sensitive(s)), diagnostics];
      }, { nodes: [] });
      return { state, diagnostics: diags };
    },

    async upgradeState(typeName, version, rawState) {
      const [state, diags] = await run(async () => {
        ready();
        const s = resourceSchema(typeName);
        let raw;
        try {
          raw = JSON.parse(rawState);
        } catch (e) {
          throw new ProviderError(`The stored \`${typeName}\` state is not JSON`, { detail: e.message });
        }
        let out;
        if (def.upgradeState) {
          out = await call("upgradeState", typeName, Number(version), raw);
        } else if (BigInt(version) !== BigInt(s.version ?? 0)) {
          throw new ProviderError(`Cannot upgrade \`${typeName}\` state from version ${version}`, {
            detail: `The provider's schema is at version ${s.version ?? 0}, and it has no upgrade from version ${version}.`,
          });
        } else {
          out = fromJson(raw, s);
        }
        return [encode(out, sensitive(s)), []];
      }, { nodes: [] });
      return { upgradedState: state, diagnostics: diags };
    },
  };
  ephemeralExportsOf.set(exports, () => ephemeralExports({ def, schema, ready, call, valueIn, sensitive, knownCheck, run }));
  return exports;
}

// --- ephemeral resources -------------------------------------------------------------

/** What `openEphemeral` answers beside the result: built with `openResponse`. */
export class OpenResponse {
  /**
   * @param {object} result the configuration with every computed attribute filled in
   * @param {{private?: Uint8Array, renewAt?: Date|number|bigint|null, diagnostics?: Array}} [options]
   *   `private`: bytes handed back to `renewEphemeral` and `closeEphemeral` (never stored);
   *   `renewAt`: when to renew (a Date, or milliseconds since the Unix epoch), null for never
   */
  constructor(result, { private: priv = new Uint8Array(), renewAt = null, diagnostics = [] } = {}) {
    this.result = result;
    this.private = priv;
    this.renewAt = renewAt;
    this.diagnostics = diagnostics;
  }
}

/** `new OpenResponse(result, options)`: the answer of `openEphemeral` with private bytes or a renewal time. */
export function openResponse(result, options) {
  return new OpenResponse(result, options);
}

// The ephemeral-resources export of each `provider` export exportProvider made.
const ephemeralExportsOf = new WeakMap();

/** `renewAt` (null, a Date, or milliseconds since the Unix epoch) as the wire's `option<u64>`. */
function renewAtToWire(renewAt, where) {
  if (renewAt == null) return undefined;
  const ms = renewAt instanceof Date ? renewAt.getTime() : renewAt;
  if ((typeof ms === "number" && Number.isInteger(ms) && ms >= 0) || (typeof ms === "bigint" && ms >= 0n)) return BigInt(ms);
  throw new ProviderError(`Provider bug: ${where} renewAt is ${String(renewAt)}`, {
    detail: "It must be null, a Date, or milliseconds since the Unix epoch.",
  });
}

/** Bytes for the wire's `list<u8>`: a Uint8Array, or a string as UTF-8. */
function bytes(v) {
  if (v == null) return new Uint8Array();
  if (typeof v === "string") return new TextEncoder().encode(v);
  return v instanceof Uint8Array ? v : new Uint8Array(v);
}

function ephemeralExports({ def, schema, ready, call, valueIn, sensitive, knownCheck, run }) {
  const ephemeralSchema = (typeName) => {
    const s = schema.ephemeralResources?.[typeName];
    if (!s) throw new ProviderError(`Unknown ephemeral resource type \`${typeName}\``);
    return s;
  };
  return {
    schemas() {
      return Object.entries(schema.ephemeralResources ?? {}).map(([n, s]) => [n, schemaToWire(s)]);
    },

    async validate(typeName, config) {
      const [, diags] = await run(async () => {
        ready();
        ephemeralSchema(typeName);
        return [null, (await call("validateEphemeral", typeName, valueIn(config, "configuration"))) ?? []];
      });
      return diags;
    },

    async open(typeName, config) {
      // On failure nothing is open: the host calls no close.
      const fallback = { result: { nodes: [] }, private: new Uint8Array(), renewAt: undefined, diagnostics: [] };
      const [answer, diags] = await run(async () => {
        ready();
        const s = ephemeralSchema(typeName);
        if (!def.openEphemeral) throw new ProviderError(`Ephemeral resource type \`${typeName}\` cannot be opened`, { detail: "The provider does not implement openEphemeral." });
        const out = await call("openEphemeral", typeName, valueIn(config, "configuration"));
        const resp = out instanceof OpenResponse ? out : new OpenResponse(out);
        const diagnostics = [...(resp.diagnostics ?? [])];
        knownCheck(resp.result, diagnostics, "the opened result", "openEphemeral");
        const wire = {
          result: encode(resp.result, sensitive(s)),
          private: bytes(resp.private),
          renewAt: renewAtToWire(resp.renewAt, "openEphemeral's"),
          diagnostics: [],
        };
        return [wire, diagnostics];
      }, fallback);
      answer.diagnostics = diags;
      return answer;
    },

    async renew(typeName, priv) {
      // On failure the object keeps its private bytes and is not renewed again.
      const fallback = { private: priv, renewAt: undefined, diagnostics: [] };
      const [answer, diags] = await run(async () => {
        ready();
        ephemeralSchema(typeName);
        if (!def.renewEphemeral) throw new ProviderError(`Ephemeral resource type \`${typeName}\` cannot be renewed`, { detail: "The provider asked for a renewal but does not implement renewEphemeral." });
        // renewEphemeral returns {private, renewAt, diagnostics}, or null to keep the bytes and renew no more.
        const resp = (await call("renewEphemeral", typeName, priv)) ?? { private: priv };
        return [{ private: bytes(resp.private), renewAt: renewAtToWire(resp.renewAt, "renewEphemeral's"), diagnostics: [] }, resp.diagnostics];
      }, fallback);
      answer.diagnostics = diags;
      return answer;
    },

    async close(typeName, priv) {
      const [, diags] = await run(async () => {
        ready();
        ephemeralSchema(typeName);
        return [null, (await call("closeEphemeral", typeName, priv)) ?? []];
      });
      return diags;
    },
  };
}

/**
 * The `ephemeral-resources` export, given the `provider` export `exportProvider` made:
 * `export const ephemeralResources = exportEphemeralResources(provider)`. Its calls go to the
 * provider `configure` set up; the definition's `schema.ephemeralResources` declares the types and
 * `validateEphemeral`, `openEphemeral`, `renewEphemeral`, `closeEphemeral` implement them. Needs the
 * SDK's world (`--wit providers/sdk-js/wit --world-name js-provider`).
 */
export function exportEphemeralResources(provider) {
  const make = ephemeralExportsOf.get(provider);
  if (!make) throw new TypeError("exportEphemeralResources takes the object exportProvider returned");
  return make();
}

/** A state read from JSON, with maps, sets and tuples typed by the schema's top-level attributes. */
export function fromJson(raw, schema) {
  if (!isPlainObject(raw)) return raw;
  const typed = (v, t) => {
    if (v == null || !t) return v;
    if (t.kind === "map" && isPlainObject(v)) return new Map(Object.entries(v).map(([k, x]) => [k, typed(x, t.of)]));
    if (t.kind === "set" && Array.isArray(v)) return ValueSet.from(v.map((x) => typed(x, t.of)));
    if (t.kind === "list" && Array.isArray(v)) return v.map((x) => typed(x, t.of));
    if (t.kind === "tuple" && Array.isArray(v)) return Tuple.from(v.map((x, i) => typed(x, t.elements[i])));
    if (t.kind === "object" && isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x, t.attrs[k])]));
    return v;
  };
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, typed(v, schema.attributes?.[k]?.type)]));
}
