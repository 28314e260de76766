package tfbridge

import (
	"context"
	"fmt"
	"strings"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Serve makes the server that newServer returns the component's provider.
// Call it once, from an init function of package main (a Go component's
// main is never called):
//
//	func init() { tfbridge.Serve(providerserver.NewProtocol6(New("dev")())) }
func Serve(newServer func() tfprotov6.ProviderServer) {
	cairn.Export(New(newServer()))
}

// TerraformVersion is what the bridged provider is told the calling
// Terraform's version is (ConfigureProviderRequest.TerraformVersion):
// providers put it in user agents, and some compare it.
const TerraformVersion = "1.11.0"

// Provider is a cairn.Provider that serves a tfprotov6.ProviderServer.
// Serve exports one; New makes one for tests.
type Provider struct {
	server tfprotov6.ProviderServer
	// schema is the cairn form of the server's schemas.
	schema *cairn.ProviderSchema
	// types are the value types of the provider configuration, of each
	// resource type and of each data source.
	providerType   tftypes.Type
	resourceTypes  map[string]tftypes.Type
	dataTypes      map[string]tftypes.Type
	ephemeralTypes map[string]tftypes.Type
	// schemaErr is why the server's schema cannot be offered to cairn:
	// reported by every call, so that `cairn providers check` shows it.
	schemaErr error
}

// New bridges server. Its schema is read (GetProviderSchema) at once.
func New(server tfprotov6.ProviderServer) *Provider {
	p := &Provider{
		server:         server,
		resourceTypes:  map[string]tftypes.Type{},
		dataTypes:      map[string]tftypes.Type{},
		ephemeralTypes: map[string]tftypes.Type{},
	}
	p.loadSchema()
	return p
}

func (p *Provider) loadSchema() {
	p.schema = &cairn.ProviderSchema{
		Resources:          map[string]cairn.Schema{},
		DataSources:        map[string]cairn.Schema{},
		EphemeralResources: map[string]cairn.Schema{},
	}
	p.providerType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
	resp, err := p.server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err == nil && resp == nil {
		err = fmt.Errorf("GetProviderSchema returned no response and no error")
	}
	if err != nil {
		p.schemaErr = cairn.Errorf("Provider bug: the provider's schema cannot be read").WithDetail("%v", err)
		return
	}
	if ds := diagnostics(resp.Diagnostics); ds.HasErrors() {
		p.schemaErr = ds
		return
	}
	var problems []string
	convert := func(what string, s *tfprotov6.Schema) cairn.Schema {
		out, errs := convertSchema(s)
		for _, e := range errs {
			problems = append(problems, what+": "+e)
		}
		return out
	}
	if resp.Provider != nil {
		p.schema.Provider = convert("the provider configuration", resp.Provider)
		p.providerType = resp.Provider.ValueType()
	}
	for name, s := range resp.ResourceSchemas {
		p.schema.Resources[name] = convert("resource type "+name, s)
		p.resourceTypes[name] = s.ValueType()
	}
	for name, s := range resp.DataSourceSchemas {
		p.schema.DataSources[name] = convert("data source "+name, s)
		p.dataTypes[name] = s.ValueType()
	}
	for name, s := range resp.EphemeralResourceSchemas {
		p.schema.EphemeralResources[name] = convert("ephemeral resource type "+name, s)
		p.ephemeralTypes[name] = s.ValueType()
	}
	if len(problems) > 0 {
		p.schemaErr = cairn.Errorf("The provider's schema uses what cairn cannot represent").
			WithDetail("%s", strings.Join(problems, "\n"))
	}
}

// Schema is the server's schema in cairn's form.
func (p *Provider) Schema() *cairn.ProviderSchema { return p.schema }

// Configure validates the provider configuration (ValidateProviderConfig)
// and configures the server with it (ConfigureProvider), as Terraform does.
func (p *Provider) Configure(config cairn.Object) error {
	if p.schemaErr != nil {
		return p.schemaErr
	}
	if config == nil {
		// No provider block: Terraform sends an object of nulls, which is
		// what the framework decodes into the provider's model.
		config = cairn.Object{}
	}
	dv, err := dynamicValue(config, p.providerType, "provider configuration")
	if err != nil {
		return err
	}
	ctx := context.Background()
	validated, err := p.server.ValidateProviderConfig(ctx, &tfprotov6.ValidateProviderConfigRequest{Config: dv})
	diags, err := answered(validated, err, "ValidateProviderConfig", func(r *tfprotov6.ValidateProviderConfigResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil || diags.HasErrors() {
		return firstErr(err, diags)
	}
	configured, err := p.server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{
		TerraformVersion:   TerraformVersion,
		Config:             dv,
		ClientCapabilities: &tfprotov6.ConfigureProviderClientCapabilities{DeferralAllowed: false},
	})
	more, err := answered(configured, err, "ConfigureProvider", func(r *tfprotov6.ConfigureProviderResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return err
	}
	return orNil(append(diags, more...))
}

// Validate checks a resource's configuration (ValidateResourceConfig).
// cairn sends write-only attributes, so the server is told it may.
func (p *Provider) Validate(typeName string, config cairn.Object) error {
	t, err := p.resourceType(typeName)
	if err != nil {
		return err
	}
	dv, err := dynamicValue(config, t, "configuration")
	if err != nil {
		return err
	}
	resp, err := p.server.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName:           typeName,
		Config:             dv,
		ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true},
	})
	diags, err := answered(resp, err, "ValidateResourceConfig", func(r *tfprotov6.ValidateResourceConfigResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return err
	}
	return orNil(diags)
}

func (p *Provider) resourceType(typeName string) (tftypes.Type, error) {
	if p.schemaErr != nil {
		return nil, p.schemaErr
	}
	t, ok := p.resourceTypes[typeName]
	if !ok {
		return nil, cairn.Errorf("Unknown resource type `%s`", typeName)
	}
	return t, nil
}

// Plan predicts a create or an update (PlanResourceChange).
func (p *Provider) Plan(req *cairn.PlanRequest) (*cairn.PlanResponse, error) {
	t, err := p.resourceType(req.TypeName)
	if err != nil {
		return nil, err
	}
	values, err := dynamicValues(t, named{req.PriorState, "prior state"}, named{req.ProposedNewState, "proposed new state"}, named{req.Config, "configuration"})
	if err != nil {
		return nil, err
	}
	resp, err := p.server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName:           req.TypeName,
		PriorState:         values[0],
		ProposedNewState:   values[1],
		Config:             values[2],
		PriorPrivate:       req.PriorPrivate,
		ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: false},
	})
	diags, err := answered(resp, err, "PlanResourceChange", func(r *tfprotov6.PlanResourceChangeResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if resp.Deferred != nil {
		return nil, deferred("plan", resp.Deferred)
	}
	out := &cairn.PlanResponse{PlannedPrivate: resp.PlannedPrivate, Diagnostics: diags}
	if diags.HasErrors() {
		return out, nil
	}
	if out.PlannedState, err = objectOf(resp.PlannedState, t, "planned state"); err != nil {
		return nil, err
	}
	for _, path := range resp.RequiresReplace {
		out.RequiresReplace = append(out.RequiresReplace, pathOf(path))
	}
	return out, nil
}

// Apply makes a planned create, update or delete (ApplyResourceChange).
func (p *Provider) Apply(req *cairn.ApplyRequest) (*cairn.ApplyResponse, error) {
	t, err := p.resourceType(req.TypeName)
	if err != nil {
		return nil, err
	}
	values, err := dynamicValues(t, named{req.PriorState, "prior state"}, named{req.PlannedState, "planned state"}, named{req.Config, "configuration"})
	if err != nil {
		return nil, err
	}
	resp, err := p.server.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName:       req.TypeName,
		PriorState:     values[0],
		PlannedState:   values[1],
		Config:         values[2],
		PlannedPrivate: req.PlannedPrivate,
	})
	diags, err := answered(resp, err, "ApplyResourceChange", func(r *tfprotov6.ApplyResourceChangeResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	out := &cairn.ApplyResponse{Private: resp.Private, Diagnostics: diags}
	// With errors, a new state that is not null is a partly made object,
	// which the host keeps (tainted after a create).
	if out.NewState, err = objectOf(resp.NewState, t, "new state"); err != nil {
		return nil, err
	}
	return out, nil
}

// Read is ReadResource without the private bytes; the glue calls
// ReadResource.
func (p *Provider) Read(req *cairn.ReadRequest) (cairn.Object, error) {
	resp, err := p.ReadResource(req)
	if err != nil {
		return nil, err
	}
	return resp.NewState, orNil(resp.Diagnostics)
}

// ReadResource refreshes an object (ReadResource): its state, private
// bytes and diagnostics.
func (p *Provider) ReadResource(req *cairn.ReadRequest) (*cairn.ReadResponse, error) {
	t, err := p.resourceType(req.TypeName)
	if err != nil {
		return nil, err
	}
	current, err := dynamicValue(req.CurrentState, t, "current state")
	if err != nil {
		return nil, err
	}
	resp, err := p.server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName:     req.TypeName,
		CurrentState: current,
		Private:      req.Private,
	})
	diags, err := answered(resp, err, "ReadResource", func(r *tfprotov6.ReadResourceResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if resp.Deferred != nil {
		return nil, deferred("refresh", resp.Deferred)
	}
	out := &cairn.ReadResponse{Private: resp.Private, Diagnostics: diags}
	if diags.HasErrors() {
		return out, nil
	}
	if out.NewState, err = objectOf(resp.NewState, t, "new state"); err != nil {
		return nil, err
	}
	return out, nil
}

// Import is ImportResources for one object; the glue calls
// ImportResources.
func (p *Provider) Import(typeName, id string) (cairn.Object, error) {
	resp, err := p.ImportResources(typeName, id)
	if err != nil {
		return nil, err
	}
	if len(resp.Imported) != 1 {
		return nil, cairn.Errorf("Import of `%s` %q found %d objects", typeName, id, len(resp.Imported))
	}
	return resp.Imported[0].State, orNil(resp.Diagnostics)
}

// ImportResources finds existing objects by id (ImportResourceState).
// cairn then reads each back, as Terraform does.
func (p *Provider) ImportResources(typeName, id string) (*cairn.ImportResponse, error) {
	if _, err := p.resourceType(typeName); err != nil {
		return nil, err
	}
	resp, err := p.server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{
		TypeName:           typeName,
		ID:                 id,
		ClientCapabilities: &tfprotov6.ImportResourceStateClientCapabilities{DeferralAllowed: false},
	})
	diags, err := answered(resp, err, "ImportResourceState", func(r *tfprotov6.ImportResourceStateResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if resp.Deferred != nil {
		return nil, deferred("import", resp.Deferred)
	}
	out := &cairn.ImportResponse{Diagnostics: diags}
	if diags.HasErrors() {
		return out, nil
	}
	for _, found := range resp.ImportedResources {
		t, err := p.resourceType(found.TypeName)
		if err != nil {
			return nil, err
		}
		state, err := objectOf(found.State, t, "imported state")
		if err != nil {
			return nil, err
		}
		out.Imported = append(out.Imported, cairn.ImportedResource{TypeName: found.TypeName, State: state, Private: found.Private})
	}
	return out, nil
}

// ReadDataSource validates a data source's configuration
// (ValidateDataResourceConfig: cairn has no separate call for it) and
// reads it (ReadDataSource).
func (p *Provider) ReadDataSource(typeName string, config cairn.Object) (cairn.Object, error) {
	if p.schemaErr != nil {
		return nil, p.schemaErr
	}
	t, ok := p.dataTypes[typeName]
	if !ok {
		return nil, cairn.Errorf("Unknown data source `%s`", typeName)
	}
	dv, err := dynamicValue(config, t, "configuration")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	validated, err := p.server.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: typeName, Config: dv})
	diags, err := answered(validated, err, "ValidateDataResourceConfig", func(r *tfprotov6.ValidateDataResourceConfigResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil || diags.HasErrors() {
		return nil, firstErr(err, diags)
	}
	resp, err := p.server.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{
		TypeName:           typeName,
		Config:             dv,
		ClientCapabilities: &tfprotov6.ReadDataSourceClientCapabilities{DeferralAllowed: false},
	})
	more, err := answered(resp, err, "ReadDataSource", func(r *tfprotov6.ReadDataSourceResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	diags = append(diags, more...)
	if resp.Deferred != nil {
		return nil, deferred("data source read", resp.Deferred)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	state, err := objectOf(resp.State, t, "data source state")
	if err != nil {
		return nil, err
	}
	return state, orNil(diags)
}

// UpgradeState rewrites a stored state into the current schema's layout
// (UpgradeResourceState, given the state as JSON).
func (p *Provider) UpgradeState(typeName string, version uint64, rawJSON string) (cairn.Object, error) {
	t, err := p.resourceType(typeName)
	if err != nil {
		return nil, err
	}
	resp, err := p.server.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: typeName,
		Version:  int64(version),
		RawState: &tfprotov6.RawState{JSON: []byte(rawJSON)},
	})
	diags, err := answered(resp, err, "UpgradeResourceState", func(r *tfprotov6.UpgradeResourceStateResponse) []*tfprotov6.Diagnostic { return r.Diagnostics })
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	state, err := objectOf(resp.UpgradedState, t, "upgraded state")
	if err != nil {
		return nil, err
	}
	return state, orNil(diags)
}

// answered checks a server's answer: an error or a nil response is a
// provider bug (a gRPC server would have failed the call); otherwise the
// response's diagnostics in cairn's form.
func answered[R any](resp *R, err error, call string, diagsOf func(*R) []*tfprotov6.Diagnostic) (cairn.Diagnostics, error) {
	if err != nil {
		return nil, cairn.Errorf("Provider bug: %s failed", call).WithDetail("%v", err)
	}
	if resp == nil {
		return nil, cairn.Errorf("Provider bug: %s returned no response and no error", call)
	}
	return diagnostics(diagsOf(resp)), nil
}

// deferred refuses a deferred answer: cairn's plan has no deferred
// changes, and the bridge tells every server it may not defer.
func deferred(what string, d *tfprotov6.Deferred) error {
	return cairn.Errorf("Provider bug: the provider deferred the %s (reason %s)", what, d.Reason).
		WithDetail("cairn has no deferred actions, and told the provider so (DeferralAllowed is false).")
}

// orNil is ds as an error, or nil when there are none.
func orNil(ds cairn.Diagnostics) error {
	if len(ds) == 0 {
		return nil
	}
	return ds
}

func firstErr(err error, ds cairn.Diagnostics) error {
	if err != nil {
		return err
	}
	return orNil(ds)
}
