"""Writes a provider's identity into its component: the
`cairn-provider-identity` custom section cairn reads (without running any of
the provider's code) to learn the provider's name and version. cairn refuses
a component whose declared name differs from the one a configuration uses,
`cairn init` locks the version, and `providers inspect` shows both.

Run it after componentize-py, as the project's `build.sh` does:

    python3 sdk/stamp_identity.py PROVIDER.wasm NAME VERSION

Plain Python (no imports beyond the standard library), so it runs outside the
component. An identity section already in the file is replaced.
"""

import re
import sys

SECTION = "cairn-provider-identity"
_MAGIC = b"\0asm"
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_VERSION = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def _leb128(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_leb128(data, at):
    n, shift = 0, 0
    while True:
        if at >= len(data):
            raise ValueError("the file ends inside a section header")
        byte = data[at]
        at += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return n, at


def _sections(data):
    """(start, end, id, custom-section name or None) of each top-level section."""
    at = 8
    while at < len(data):
        start, section_id = at, data[at]
        size, body = _read_leb128(data, at + 1)
        end = body + size
        if end > len(data):
            raise ValueError("a section runs past the end of the file")
        name = None
        if section_id == 0:
            length, name_at = _read_leb128(data, body)
            name = data[name_at:name_at + length].decode("utf-8", "replace")
        yield start, end, section_id, name
        at = end


def stamp(wasm, name, version):
    """`wasm` (bytes of a component) with its identity set to `name` and `version`."""
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a provider name (lowercase letters, digits, _ and -)")
    if not _VERSION.match(version):
        raise ValueError(f"{version!r} is not a semantic version (like 1.2.3)")
    if wasm[:4] != _MAGIC:
        raise ValueError("not a WebAssembly file")
    kept = bytearray(wasm[:8])
    for start, end, _, section in _sections(wasm):
        if section != SECTION:
            kept += wasm[start:end]
    encoded = SECTION.encode()
    payload = _leb128(len(encoded)) + encoded + f"name={name}\nversion={version}\n".encode()
    return bytes(kept) + b"\0" + _leb128(len(payload)) + payload


def main(argv):
    if len(argv) != 4:
        print("usage: stamp_identity.py PROVIDER.wasm NAME VERSION", file=sys.stderr)
        return 2
    path, name, version = argv[1:]
    try:
        with open(path, "rb") as f:
            stamped = stamp(f.read(), name, version)
    except (OSError, ValueError) as e:
        print(f"stamp_identity.py: {path}: {e}", file=sys.stderr)
        return 1
    with open(path, "wb") as f:
        f.write(stamped)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
