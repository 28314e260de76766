package cairn

// Moves across resource types: the optional `state-moves` export
// (wit/provider.wit), which every Go component exports because a Go
// component's exports are fixed when it is built.

import (
	moves "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_state_moves"
)

// StateMover is an optional Provider hook: converting an object stored as
// another resource type (perhaps another provider's) into one of this
// provider's types, for a configuration's
//
//	moved {
//	  from = null_resource.a
//	  to   = terraform_data.a
//	}
//
// The host calls it on the TARGET type's provider. Refuse a source type or
// provider you do not take with an error: the host reports it at the
// `moved` block and plans nothing. A provider without the hook answers that
// it takes no moves, and the user gets the host's "does not support moved
// operations across resource types" error.
type StateMover interface {
	MoveState(req *MoveStateRequest) (*MoveStateResponse, error)
}

// MoveStateRequest is what MoveState is given.
type MoveStateRequest struct {
	// SourceProviderAddress is the full address of the provider the object
	// was stored by (`registry.terraform.io/hashicorp/null`).
	SourceProviderAddress string
	// SourceTypeName is the resource type the object was stored as.
	SourceTypeName string
	// SourceSchemaVersion is the version of the source type's schema the
	// object was written with.
	SourceSchemaVersion uint64
	// SourceStateJSON is the stored attributes, as JSON, in the source
	// type's layout (read it with encoding/json: the source's schema is not
	// this provider's).
	SourceStateJSON string
	// SourcePrivate is the private bytes the source provider stored.
	SourcePrivate []byte
	// TargetTypeName is the type to convert to: one of this provider's.
	TargetTypeName string
	// TargetSchema is the target type's schema.
	TargetSchema *Schema
}

// MoveStateResponse is what MoveState answers.
type MoveStateResponse struct {
	// TargetState is the object in the target type's layout, every value
	// known (the host checks it against the schema).
	TargetState Object
	// TargetPrivate is the private bytes to store with the moved object.
	TargetPrivate []byte
}

// unsupportedMoveSummary is the summary of the answer of a provider
// without MoveState: alone, with no detail or path, it tells the host that
// the provider takes no moves, so that the host reports it as for a
// component without the export. Keep it identical to the host's
// UNSUPPORTED_SUMMARY (host/src/runtime/state_moves.rs).
const unsupportedMoveSummary = "cairn: state-moves not implemented by this provider"

// moveGlue serves the generated `state-moves` export for one Provider.
type moveGlue struct{ g *glue }

func (m moveGlue) MoveResourceState(request moves.MoveRequest) (out moves.MoveResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	state, private, err := m.g.moveState(request)
	diags = diagnosticsOf(err)
	if diags.HasErrors() {
		return
	}
	out.TargetState = state
	out.TargetPrivate = private
	return
}

// moveState hands a move to the provider's MoveState, or answers that
// there is none.
func (g *glue) moveState(request moves.MoveRequest) (moves.Value, []byte, error) {
	mover, ok := g.provider.(StateMover)
	if !ok {
		return moves.Value{}, nil, &Diagnostic{Severity: SeverityError, Summary: unsupportedMoveSummary}
	}
	s, err := g.resourceSchema(request.TargetTypeName)
	if err != nil {
		return moves.Value{}, nil, err
	}
	resp, err := mover.MoveState(&MoveStateRequest{
		SourceProviderAddress: request.SourceProviderAddress,
		SourceTypeName:        request.SourceTypeName,
		SourceSchemaVersion:   request.SourceSchemaVersion,
		SourceStateJSON:       request.SourceState,
		SourcePrivate:         request.SourcePrivate,
		TargetTypeName:        request.TargetTypeName,
		TargetSchema:          s,
	})
	if diagnosticsOf(err).HasErrors() {
		return moves.Value{}, nil, err
	}
	if resp == nil || resp.TargetState == nil {
		return moves.Value{}, nil, Errorf("Provider bug: MoveState returned no state and no error")
	}
	v, encErr := objectOut(resp.TargetState, s, nil)
	if encErr != nil {
		return moves.Value{}, nil, encErr
	}
	return v, resp.TargetPrivate, err
}
