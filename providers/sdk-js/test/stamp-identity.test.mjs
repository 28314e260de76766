// Unit tests of stamp-identity.mjs, under Node: `node --test providers/sdk-js/test/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SECTION, sections, stamp } from "../stamp-identity.mjs";

// The smallest component: the magic and the component layer's version.
const EMPTY = Buffer.from([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0]);
const text = (bytes) => Buffer.from(bytes).toString("latin1");
const identities = (wasm) => sections(wasm).filter((s) => s.name === SECTION);

test("the section says name and version", () => {
  const wasm = stamp(EMPTY, "http", "1.2.3");
  assert.equal(identities(wasm).length, 1);
  assert.ok(text(wasm).endsWith("name=http\nversion=1.2.3\n"));
  assert.deepEqual(wasm.subarray(0, 8), EMPTY);
});

test("stamping again replaces the section and keeps the others", () => {
  const other = Buffer.from([0, 6, 5, ...Buffer.from("other")]);
  const wasm = stamp(stamp(Buffer.concat([EMPTY, other]), "a", "0.1.0"), "b", "0.2.0");
  assert.equal(identities(wasm).length, 1);
  assert.ok(text(wasm).includes("name=b\nversion=0.2.0\n"));
  assert.ok(text(wasm).includes(text(other)));
});

test("bad input is refused", () => {
  assert.throws(() => stamp(EMPTY, "Bad Name", "1.0.0"), /not a provider name/);
  assert.throws(() => stamp(EMPTY, "ok", "1.0"), /not a semantic version/);
  assert.throws(() => stamp(Buffer.from("hello world"), "ok", "1.0.0"), /not a WebAssembly file/);
  assert.throws(() => stamp(Buffer.concat([EMPTY, Buffer.from([1, 0x10])]), "ok", "1.0.0"), /past the end/);
});
