// Command stamp-identity writes a provider's identity into its component:
// the `cairn-provider-identity` custom section cairn reads (without running
// any of the provider's code) to learn the provider's name and version.
// cairn refuses a component whose declared name differs from the one a
// configuration uses, `cairn init` locks the version, and `providers
// inspect` shows both.
//
// Run it after `cairn providers componentize`, as a project's build.sh does:
//
//	go run ./sdk/cmd/stamp-identity PROVIDER.wasm NAME VERSION
//
// It runs natively (not in the component). An identity section already in
// the file is replaced. The same tool as the Python and JavaScript SDKs'
// stamp_identity.py and stamp-identity.mjs.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
)

const section = "cairn-provider-identity"

var (
	validName    = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	validVersion = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: stamp-identity PROVIDER.wasm NAME VERSION")
		os.Exit(2)
	}
	path, name, version := os.Args[1], os.Args[2], os.Args[3]
	wasm, err := os.ReadFile(path)
	if err == nil {
		wasm, err = stamp(wasm, name, version)
	}
	if err == nil {
		err = os.WriteFile(path, wasm, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "stamp-identity: %s: %v\n", path, err)
		os.Exit(1)
	}
}

// stamp returns wasm (the bytes of a component) with its identity set to
// name and version.
func stamp(wasm []byte, name, version string) ([]byte, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("%q is not a provider name (lowercase letters, digits, _ and -)", name)
	}
	if !validVersion.MatchString(version) {
		return nil, fmt.Errorf("%q is not a semantic version (like 1.2.3)", version)
	}
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly file")
	}
	kept := append([]byte{}, wasm[:8]...)
	for at := 8; at < len(wasm); {
		id := wasm[at]
		size, body, err := readLEB128(wasm, at+1)
		if err != nil {
			return nil, err
		}
		end := body + int(size)
		if end > len(wasm) || end < body {
			return nil, errors.New("a section runs past the end of the file")
		}
		if !(id == 0 && customName(wasm[body:end]) == section) {
			kept = append(kept, wasm[at:end]...)
		}
		at = end
	}
	payload := append(leb128(uint64(len(section))), section...)
	payload = append(payload, fmt.Sprintf("name=%s\nversion=%s\n", name, version)...)
	kept = append(kept, 0)
	kept = append(kept, leb128(uint64(len(payload)))...)
	return append(kept, payload...), nil
}

// customName is the name of a custom section with this body ("" when
// malformed).
func customName(body []byte) string {
	n, at, err := readLEB128(body, 0)
	if err != nil || at+int(n) > len(body) {
		return ""
	}
	return string(body[at : at+int(n)])
}

func leb128(n uint64) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			out = append(out, b|0x80)
		} else {
			return append(out, b)
		}
	}
}

func readLEB128(data []byte, at int) (uint64, int, error) {
	var n uint64
	for shift := 0; shift < 64; shift += 7 {
		if at >= len(data) {
			return 0, 0, errors.New("the file ends inside a section header")
		}
		b := data[at]
		at++
		n |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return n, at, nil
		}
	}
	return 0, 0, errors.New("a section size is too long")
}
