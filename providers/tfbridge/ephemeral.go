package tfbridge

// Ephemeral resources (Terraform 1.10): cairn's optional
// `ephemeral-resources` export over the protocol's
// ValidateEphemeralResourceConfig, OpenEphemeralResource,
// RenewEphemeralResource and CloseEphemeralResource. A framework provider
// offers them with ephemeral.EphemeralResource (and
// EphemeralResourceWithRenew, EphemeralResourceWithClose); protocol 5
// servers' pass through tf5to6server unchanged.

import (
	"context"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Provider serves the SDK's optional ephemeral resource hook.
var _ cairn.EphemeralResourcer = (*Provider)(nil)

func (p *Provider) ephemeralType(typeName string) (tftypes.Type, error) {
	if p.schemaErr != nil {
		return nil, p.schemaErr
	}
	t, ok := p.ephemeralTypes[typeName]
	if !ok {
		return nil, cairn.Errorf("Unknown ephemeral resource type `%s`", typeName)
	}
	return t, nil
}

// ValidateEphemeral checks an ephemeral resource's configuration
// (ValidateEphemeralResourceConfig).
func (p *Provider) ValidateEphemeral(typeName string, config cairn.Object) error {
	t, err := p.ephemeralType(typeName)
	if err != nil {
		return err
	}
	dv, err := dynamicValue(config, t, "configuration")
	if err != nil {
		return err
	}
	resp, err := p.server.ValidateEphemeralResourceConfig(context.Background(), &tfprotov6.ValidateEphemeralResourceConfigRequest{
		TypeName: typeName,
		Config:   dv,
	})
	diags, err := answered(resp, err, "ValidateEphemeralResourceConfig", func(r *tfprotov6.ValidateEphemeralResourceConfigResponse) []*tfprotov6.Diagnostic {
		return r.Diagnostics
	})
	if err != nil {
		return err
	}
	return orNil(diags)
}

// OpenEphemeral opens an ephemeral resource (OpenEphemeralResource): its
// result, private bytes and renewal time. The server is told it may not
// defer, and a deferred answer is refused.
func (p *Provider) OpenEphemeral(req *cairn.OpenEphemeralRequest) (*cairn.OpenEphemeralResponse, error) {
	t, err := p.ephemeralType(req.TypeName)
	if err != nil {
		return nil, err
	}
	dv, err := dynamicValue(req.Config, t, "configuration")
	if err != nil {
		return nil, err
	}
	resp, err := p.server.OpenEphemeralResource(context.Background(), &tfprotov6.OpenEphemeralResourceRequest{
		TypeName:           req.TypeName,
		Config:             dv,
		ClientCapabilities: &tfprotov6.OpenEphemeralResourceClientCapabilities{DeferralAllowed: false},
	})
	diags, err := answered(resp, err, "OpenEphemeralResource", func(r *tfprotov6.OpenEphemeralResourceResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if resp.Deferred != nil {
		return nil, deferred("opening of the ephemeral resource", resp.Deferred)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	result, err := objectOf(resp.Result, t, "ephemeral resource result")
	if err != nil {
		return nil, err
	}
	return &cairn.OpenEphemeralResponse{Result: result, Private: resp.Private, RenewAt: resp.RenewAt, Diagnostics: diags}, nil
}

// RenewEphemeral renews an open ephemeral resource
// (RenewEphemeralResource).
func (p *Provider) RenewEphemeral(req *cairn.RenewEphemeralRequest) (*cairn.RenewEphemeralResponse, error) {
	if _, err := p.ephemeralType(req.TypeName); err != nil {
		return nil, err
	}
	resp, err := p.server.RenewEphemeralResource(context.Background(), &tfprotov6.RenewEphemeralResourceRequest{
		TypeName: req.TypeName,
		Private:  req.Private,
	})
	diags, err := answered(resp, err, "RenewEphemeralResource", func(r *tfprotov6.RenewEphemeralResourceResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return &cairn.RenewEphemeralResponse{Private: resp.Private, RenewAt: resp.RenewAt, Diagnostics: diags}, nil
}

// CloseEphemeral closes an open ephemeral resource
// (CloseEphemeralResource).
func (p *Provider) CloseEphemeral(req *cairn.CloseEphemeralRequest) error {
	if _, err := p.ephemeralType(req.TypeName); err != nil {
		return err
	}
	resp, err := p.server.CloseEphemeralResource(context.Background(), &tfprotov6.CloseEphemeralResourceRequest{
		TypeName: req.TypeName,
		Private:  req.Private,
	})
	diags, err := answered(resp, err, "CloseEphemeralResource", func(r *tfprotov6.CloseEphemeralResourceResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return err
	}
	return orNil(diags)
}
