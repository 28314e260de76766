package main

import (
	"bytes"
	"strings"
	"testing"
)

// An empty component: the magic and the component-model version.
var component = []byte("\x00asm\x0d\x00\x01\x00")

func TestStampingTwiceKeepsOneIdentity(t *testing.T) {
	once, err := stamp(component, "hello", "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	twice, err := stamp(once, "hello", "0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(twice, []byte(section)) != 1 || !bytes.Contains(twice, []byte("name=hello\nversion=0.2.0\n")) {
		t.Errorf("stamped twice: %q", twice)
	}
	if !bytes.HasPrefix(twice, component) {
		t.Errorf("the header changed: %q", twice[:8])
	}
}

func TestBadInputsAreRefused(t *testing.T) {
	for _, c := range []struct{ wasm, name, version, want string }{
		{string(component), "Hello", "0.1.0", "not a provider name"},
		{string(component), "hello", "1", "not a semantic version"},
		{"not wasm", "hello", "0.1.0", "not a WebAssembly file"},
		{string(component) + "\x00\x7f", "hello", "0.1.0", "runs past the end"},
	} {
		_, err := stamp([]byte(c.wasm), c.name, c.version)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q %q: err = %v, want %q", c.wasm, c.name, c.version, err, c.want)
		}
	}
}
