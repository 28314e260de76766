package cairn

import (
	"strings"
	"testing"

	abi "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_provider"
	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// panicky panics in Plan and answers Apply with whatever the test sets.
type panicky struct {
	Base
	applied Object
}

func (*panicky) Schema() *ProviderSchema {
	return &ProviderSchema{Resources: map[string]Schema{"t": *testSchema()}}
}

func (*panicky) Configure(Object) error { return nil }

func (*panicky) Plan(req *PlanRequest) (*PlanResponse, error) {
	var m map[string]int
	m["x"] = 1
	return nil, nil
}

func (p *panicky) Apply(req *ApplyRequest) (*ApplyResponse, error) {
	return Applied(p.applied), nil
}

func mustEncode(t *testing.T, v any) wire.Value {
	t.Helper()
	w, err := encodeValue(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestValuesRoundTripThroughTheWire(t *testing.T) {
	prefix := "ab"
	v := Object{
		"s": "x", "n": int64(-3), "f": 1.5, "whole": 2.0, "b": true, "null": nil,
		"l": []any{"a", int64(1)}, "set": Set{"a"}, "m": Map{"k": "v"}, "t": Tuple{true, "x"},
		"u": Unknown{Prefix: &prefix}, "o": Object{"inner": Unknown{}},
	}
	w, err := encodeValue(v, map[string]bool{"s": true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeValue(w)
	if err != nil {
		t.Fatal(err)
	}
	want := v.Clone()
	want["whole"] = int64(2) // whole numbers travel as integers
	want["u"] = Unknown{NotNull: true, Prefix: &prefix}
	if !Equal(back, want) {
		t.Errorf("got %#v\nwant %#v", back, want)
	}
	var marked []string
	for _, n := range w.Nodes {
		if n.Sensitive {
			marked = append(marked, n.Kind.Text())
		}
	}
	if len(marked) != 1 || marked[0] != "x" {
		t.Errorf("the nodes marked sensitive are %q, want only attribute s's", marked)
	}
}

func TestMalformedWireValuesAreErrors(t *testing.T) {
	w := wire.Value{Nodes: []wire.Node{{Kind: wire.MakeValueNodeList([]uint32{7})}}}
	if _, err := decodeValue(w); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("err = %v", err)
	}
	if _, err := encodeValue(Object{"c": make(chan int)}, nil); err == nil || !strings.Contains(err.Error(), "value.c") {
		t.Errorf("err = %v", err)
	}
}

func TestAPanicInPlanIsAnErrorDiagnosticWithTheStack(t *testing.T) {
	g := newGlue(&panicky{})
	if ds := g.Configure(wire.Value{}); len(ds) != 0 {
		t.Fatalf("configure: %#v", ds)
	}
	cfg := mustEncode(t, testConfig("x"))
	resp := g.PlanResource(abi.PlanRequest{TypeName: "t", ProposedNewState: cfg, Config: cfg})
	if len(resp.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %#v", resp.Diagnostics)
	}
	d := resp.Diagnostics[0]
	if d.Severity != wire.Severity_Error || !strings.Contains(d.Summary, "panic: assignment to entry in nil map") {
		t.Errorf("summary %q", d.Summary)
	}
	if !strings.Contains(d.Detail, "(*panicky).Plan") {
		t.Errorf("the detail does not start at the panicking frame:\n%s", d.Detail)
	}
}

func TestAnUnknownInANewStateIsReported(t *testing.T) {
	applied := testPrior("x")
	applied["id"] = Unknown{}
	g := newGlue(&panicky{applied: applied})
	g.Configure(wire.Value{})
	resp := g.ApplyResource(abi.ApplyRequest{TypeName: "t", PlannedState: mustEncode(t, testPrior("x"))})
	if len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Summary, "unknown value") {
		t.Fatalf("diagnostics: %#v", resp.Diagnostics)
	}
	if len(resp.NewState.Nodes) != 0 {
		t.Error("a failed create must record nothing")
	}
}

func TestCallsBeforeConfigureAndUnknownTypesAreErrors(t *testing.T) {
	g := newGlue(&panicky{})
	if ds := g.ValidateResource("t", wire.Value{}); len(ds) != 1 || ds[0].Summary != "Provider not configured" {
		t.Errorf("%#v", ds)
	}
	g.Configure(wire.Value{})
	if ds := g.ValidateResource("nope", wire.Value{}); len(ds) != 1 || !strings.Contains(ds[0].Summary, "Unknown resource type") {
		t.Errorf("%#v", ds)
	}
}
