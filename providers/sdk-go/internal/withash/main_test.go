package main

import (
	"os"
	"strings"
	"testing"
)

// The committed bindings were generated from the WIT as it is now.
func TestBindingsMatchTheWIT(t *testing.T) {
	want, err := os.ReadFile("../wit/WIT_SHA256")
	if err != nil {
		t.Fatalf("the bindings record no WIT hash: %v (run scripts/regen-go-bindings.sh)", err)
	}
	got, err := hashTree("../../wit")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Fatalf("providers/sdk-go/wit (or wit/provider.wit) changed since the Go bindings were generated: run scripts/regen-go-bindings.sh and commit providers/sdk-go/internal/wit")
	}
}
