// The `tfhttp` test provider: a Terraform provider written with
// terraform-plugin-framework, as real providers are, that manages items
// in an HTTP store. It is built twice from the same code: for cairn with
// the bridge (main_cairn.go, GOOS=wasip1) and for Terraform as a gRPC
// plugin (main.go). It uses what real providers use: plan modifiers
// (UseStateForUnknown, RequiresReplace), validators, defaults, nested
// attributes and a nested block, a data source, import, private state,
// sensitive and write-only attributes, a state upgrade, and an ephemeral
// resource (`tfhttp_lease`, a token for a write-only attribute).
//
// `tfhttp_misbehave` fails on purpose in plan (a panic, a hang, a memory
// flood), for the tests that check such a failure fails only that resource.
package main

import (
	"context"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// tfhttpProvider is the provider; Configure hands its client to the
// resources and data sources.
type tfhttpProvider struct{ version string }

type providerModel struct {
	Endpoint types.String `tfsdk:"endpoint"`
}

// New makes the provider, as `providerserver.Serve` and the bridge want.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &tfhttpProvider{version: version} }
}

func (p *tfhttpProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "tfhttp"
	resp.Version = p.version
}

func (p *tfhttpProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Items in an HTTP store.",
		Attributes: map[string]schema.Attribute{
			// Optional: a configuration with no items needs no store.
			"endpoint": schema.StringAttribute{Optional: true, Description: "The store's base URL."},
		},
	}
}

func (p *tfhttpProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// http.DefaultTransport: the host's wasi:http in a component (main_cairn.go
	// imports cairnhttp), the machine's network in Terraform.
	c := &client{endpoint: config.Endpoint.ValueString(), http: &http.Client{}}
	resp.ResourceData = c
	resp.DataSourceData = c
	resp.EphemeralResourceData = c
}

func (p *tfhttpProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newItemResource, newLegacyItemResource, newMisbehaveResource}
}

func (p *tfhttpProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newItemDataSource}
}

func (p *tfhttpProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{newLeaseEphemeral}
}
