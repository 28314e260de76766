package main

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// misbehaveResource is `tfhttp_misbehave`: its plan does what `action`
// says: "panic" (a nil map write, as a real bug would), "hang" (a loop
// that never ends), "flood" (allocates until memory runs out); any other
// action behaves, so that `cairn providers check` can take the resource
// through its whole lifecycle with generated values and no network.
type misbehaveResource struct{}

var _ resource.ResourceWithModifyPlan = &misbehaveResource{}

func newMisbehaveResource() resource.Resource { return &misbehaveResource{} }

type misbehaveModel struct {
	ID     types.String `tfsdk:"id"`
	Action types.String `tfsdk:"action"`
}

func (r *misbehaveResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_misbehave"
}

func (r *misbehaveResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"action": schema.StringAttribute{
			Required:      true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
	}}
}

// kept holds every block the flood allocates, so that none is collected.
var kept [][]byte

// spins counts the hang's turns, so that the loop is not optimised away.
var spins uint64

func (r *misbehaveResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var action types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("action"), &action)...)
	switch action.ValueString() {
	case "panic":
		var m map[string]int
		m["deliberate"] = 1
	case "hang":
		for {
			spins++
		}
	case "flood":
		for {
			block := make([]byte, 1<<20)
			for i := range block {
				block[i] = byte(i)
			}
			kept = append(kept, block)
		}
	}
}

func (r *misbehaveResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m misbehaveModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.ID = types.StringValue("misbehave-" + m.Action.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *misbehaveResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r *misbehaveResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m misbehaveModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *misbehaveResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
