package tfbridge

import (
	"context"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// MoveState converts an object stored as another resource type into one of
// the provider's (a `moved` block across types): the protocol's
// MoveResourceState, given the source state as JSON. A framework resource
// takes moves by implementing resource.ResourceWithMoveState; the
// framework answers the others with an error that names the source and
// target types, which the host reports at the `moved` block.
func (p *Provider) MoveState(req *cairn.MoveStateRequest) (*cairn.MoveStateResponse, error) {
	t, err := p.resourceType(req.TargetTypeName)
	if err != nil {
		return nil, err
	}
	resp, err := p.server.MoveResourceState(context.Background(), &tfprotov6.MoveResourceStateRequest{
		SourceProviderAddress: req.SourceProviderAddress,
		SourceTypeName:        req.SourceTypeName,
		SourceSchemaVersion:   int64(req.SourceSchemaVersion),
		SourceState:           &tfprotov6.RawState{JSON: []byte(req.SourceStateJSON)},
		SourcePrivate:         req.SourcePrivate,
		TargetTypeName:        req.TargetTypeName,
	})
	diags, err := answered(resp, err, "MoveResourceState", func(r *tfprotov6.MoveResourceStateResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	state, err := objectOf(resp.TargetState, t, "moved state")
	if err != nil {
		return nil, err
	}
	return &cairn.MoveStateResponse{TargetState: state, TargetPrivate: resp.TargetPrivate}, orNil(diags)
}
