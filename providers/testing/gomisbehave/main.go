// The `gomisbehave` test provider: a Go provider that fails in the ways a
// Go program can, for the tests that check such a failure fails only that
// resource, with a clear diagnostic, and never the host:
//
//   - `gomisbehave_panic` panics in plan (the SDK recovers it and reports
//     it as a provider bug, with the panic's message and stack);
//   - `gomisbehave_oom` allocates in plan until the instance's memory limit
//     stops it (Go's runtime cannot recover from that: the instance traps,
//     and the host reports the limit);
//   - `gomisbehave_ok` behaves, and is planned after the others.
package main

import (
	cairn "cairn.dev/sdk-go"
)

type misbehave struct{ cairn.Base }

var empty = cairn.Schema{Block: cairn.Block{Attributes: map[string]cairn.Attr{
	"id": {Type: cairn.String, Computed: true},
}}}

func (*misbehave) Schema() *cairn.ProviderSchema {
	return &cairn.ProviderSchema{Resources: map[string]cairn.Schema{
		"gomisbehave_panic": empty,
		"gomisbehave_oom":   empty,
		"gomisbehave_ok":    empty,
	}}
}

func (*misbehave) Configure(config cairn.Object) error { return nil }

// kept holds every block allocated, so that none can be collected.
var kept [][]byte

func (*misbehave) Plan(req *cairn.PlanRequest) (*cairn.PlanResponse, error) {
	switch req.TypeName {
	case "gomisbehave_panic":
		var m map[string]int
		m["deliberate"] = 1 // a nil map write: a runtime panic, as a real bug would be
	case "gomisbehave_oom":
		for {
			block := make([]byte, 1<<20)
			for i := range block {
				block[i] = byte(i) // touch it, so that it is really used
			}
			kept = append(kept, block)
		}
	}
	return cairn.PlanFromProposed(req), nil
}

func (*misbehave) Apply(req *cairn.ApplyRequest) (*cairn.ApplyResponse, error) {
	if req.IsDelete() {
		return cairn.Deleted(), nil
	}
	state := req.PlannedState.Clone()
	state["id"] = req.IdempotencyKey
	return cairn.Applied(state), nil
}

func init() { cairn.Export(&misbehave{}) }

func main() {}
