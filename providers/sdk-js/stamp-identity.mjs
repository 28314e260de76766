// Writes a provider's identity into its component: the
// `cairn-provider-identity` custom section cairn reads (without running any
// of the provider's code) to learn the provider's name and version. cairn
// refuses a component whose declared name differs from the one a
// configuration uses, `cairn init` locks the version, and `providers
// inspect` shows both.
//
// Run it after componentize-js, as the project's `build.sh` does:
//
//   node sdk/stamp-identity.mjs PROVIDER.wasm NAME VERSION
//
// An identity section already in the file is replaced.
import { readFileSync, writeFileSync } from "node:fs";
import { argv, exit } from "node:process";
import { fileURLToPath } from "node:url";

export const SECTION = "cairn-provider-identity";
const NAME = /^[a-z][a-z0-9_-]*$/;
const VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

function leb128(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function readLeb128(data, at) {
  let n = 0;
  let scale = 1;
  for (;;) {
    if (at >= data.length) throw new Error("the file ends inside a section header");
    const byte = data[at++];
    n += (byte & 0x7f) * scale;
    scale *= 128;
    if (!(byte & 0x80)) return [n, at];
  }
}

/** Each top-level section: { start, end, id, name } (name only for custom sections). */
export function sections(data) {
  const found = [];
  let at = 8;
  while (at < data.length) {
    const start = at;
    const id = data[at];
    const [size, body] = readLeb128(data, at + 1);
    const end = body + size;
    if (end > data.length) throw new Error("a section runs past the end of the file");
    let name = null;
    if (id === 0) {
      const [length, nameAt] = readLeb128(data, body);
      name = new TextDecoder().decode(data.subarray(nameAt, nameAt + length));
    }
    found.push({ start, end, id, name });
    at = end;
  }
  return found;
}

/** `wasm` (the bytes of a component) with its identity set to `name` and `version`. */
export function stamp(wasm, name, version) {
  if (!NAME.test(name)) throw new Error(`${JSON.stringify(name)} is not a provider name (lowercase letters, digits, _ and -)`);
  if (!VERSION.test(version)) throw new Error(`${JSON.stringify(version)} is not a semantic version (like 1.2.3)`);
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) {
    throw new Error("not a WebAssembly file");
  }
  const parts = [wasm.subarray(0, 8)];
  for (const s of sections(wasm)) {
    if (s.name !== SECTION) parts.push(wasm.subarray(s.start, s.end));
  }
  const encoder = new TextEncoder();
  const sectionName = encoder.encode(SECTION);
  const payload = [...leb128(sectionName.length), ...sectionName, ...encoder.encode(`name=${name}\nversion=${version}\n`)];
  parts.push(Uint8Array.from([0, ...leb128(payload.length), ...payload]));
  return Buffer.concat(parts);
}

if (argv[1] === fileURLToPath(import.meta.url)) {
  if (argv.length !== 5) {
    console.error("usage: node stamp-identity.mjs PROVIDER.wasm NAME VERSION");
    exit(2);
  }
  const [path, name, version] = argv.slice(2);
  try {
    writeFileSync(path, stamp(readFileSync(path), name, version));
  } catch (e) {
    console.error(`stamp-identity.mjs: ${path}: ${e.message}`);
    exit(1);
  }
}
