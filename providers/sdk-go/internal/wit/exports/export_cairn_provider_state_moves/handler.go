// Package export_cairn_provider_state_moves holds the function the generated
// exports (package wit_exports) call for the optional
// `cairn:provider/state-moves` interface. Written by hand, not generated: it
// hands the call to Handler, which the SDK's cairn.Export sets. (Kept by
// scripts/regen-go-bindings.sh.)
package export_cairn_provider_state_moves

import "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_state_moves"

// Exports is the state-moves interface with the generated wire types.
type Exports interface {
	MoveResourceState(request cairn_provider_state_moves.MoveRequest) cairn_provider_state_moves.MoveResponse
}

// Handler serves every call; set by cairn.Export.
var Handler Exports

func MoveResourceState(request cairn_provider_state_moves.MoveRequest) cairn_provider_state_moves.MoveResponse {
	if Handler == nil {
		panic("cairn: this component exports no provider: call cairn.Export(yourProvider) in an init function of package main")
	}
	return Handler.MoveResourceState(request)
}
