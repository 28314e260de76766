package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// leaseEphemeral is the ephemeral resource `tfhttp_lease`: a short-lived
// token the store hands out (open), extends (renew) and revokes (close),
// for write-only attributes such as tfhttp_item's `secret`. The store
// records each call, so that tests see what Terraform and cairn did.
//
// Two scopes misbehave on purpose, for the tests of errors: the store
// refuses `forbidden` (an error at `scope`), and `later` is deferred,
// which neither tool allows.
type leaseEphemeral struct{ client *client }

var (
	_ ephemeral.EphemeralResourceWithConfigure = &leaseEphemeral{}
	_ ephemeral.EphemeralResourceWithRenew     = &leaseEphemeral{}
	_ ephemeral.EphemeralResourceWithClose     = &leaseEphemeral{}
)

func newLeaseEphemeral() ephemeral.EphemeralResource { return &leaseEphemeral{} }

type leaseModel struct {
	Scope types.String `tfsdk:"scope"`
	Renew types.Bool   `tfsdk:"renew"`
	ID    types.String `tfsdk:"id"`
	Token types.String `tfsdk:"token"`
}

// leasePrivateKey holds the lease's id in the private data that renew and
// close are given.
const leasePrivateKey = "lease"

func (e *leaseEphemeral) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_lease"
}

func (e *leaseEphemeral) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A token leased from the store for one run.",
		Attributes: map[string]schema.Attribute{
			"scope": schema.StringAttribute{Required: true, Description: "What the token may do."},
			"renew": schema.BoolAttribute{
				Optional:    true,
				Description: "Ask to be renewed at once (once), as a lease about to expire would.",
			},
			"id":    schema.StringAttribute{Computed: true, Description: "The store's lease id."},
			"token": schema.StringAttribute{Computed: true, Sensitive: true, Description: "The leased token."},
		},
	}
}

func (e *leaseEphemeral) Configure(_ context.Context, req ephemeral.ConfigureRequest, _ *ephemeral.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		e.client = c
	}
}

func (e *leaseEphemeral) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var config leaseModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if config.Scope.ValueString() == "later" {
		resp.Deferred = &ephemeral.Deferred{Reason: ephemeral.DeferredReasonAbsentPrereq}
		return
	}
	got, err := e.client.openLease(config.Scope.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("scope"), "Cannot lease a token", err.Error())
		return
	}
	config.ID = types.StringValue(got.ID)
	config.Token = types.StringValue(got.Token)
	resp.Diagnostics.Append(resp.Result.Set(ctx, config)...)
	private, err := json.Marshal(map[string]string{"id": got.ID})
	if err != nil {
		resp.Diagnostics.AddError("Cannot keep the lease id", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, leasePrivateKey, private)...)
	if config.Renew.ValueBool() {
		resp.RenewAt = time.Now()
	}
}

// leaseID reads the lease id back from the private data.
func leaseID(ctx context.Context, private interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
}) (string, error) {
	raw, diags := private.GetKey(ctx, leasePrivateKey)
	if diags.HasError() || raw == nil {
		return "", fmt.Errorf("the private data holds no lease id")
	}
	var kept struct{ ID string }
	if err := json.Unmarshal(raw, &kept); err != nil || kept.ID == "" {
		return "", fmt.Errorf("the private data's lease id is unreadable: %s", raw)
	}
	return kept.ID, nil
}

func (e *leaseEphemeral) Renew(ctx context.Context, req ephemeral.RenewRequest, resp *ephemeral.RenewResponse) {
	id, err := leaseID(ctx, req.Private)
	if err == nil {
		err = e.client.renewLease(id)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot renew the lease", err.Error())
	}
	// Renewed once: the zero RenewAt asks for no more.
}

func (e *leaseEphemeral) Close(ctx context.Context, req ephemeral.CloseRequest, resp *ephemeral.CloseResponse) {
	id, err := leaseID(ctx, req.Private)
	if err == nil {
		err = e.client.revokeLease(id)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot revoke the lease", err.Error())
	}
}
