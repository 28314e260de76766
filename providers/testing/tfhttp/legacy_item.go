package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// legacyItemResource is `tfhttp_legacy_item`: the same store items in an
// older layout (`content` for `value`, nothing else), which configurations
// move to `tfhttp_item` with a `moved` block (itemResource.MoveState).
type legacyItemResource struct{ client *client }

var _ resource.ResourceWithConfigure = &legacyItemResource{}

func newLegacyItemResource() resource.Resource { return &legacyItemResource{} }

type legacyItemModel struct {
	ID       types.String `tfsdk:"id"`
	Name     types.String `tfsdk:"name"`
	Content  types.String `tfsdk:"content"`
	Revision types.Int64  `tfsdk:"revision"`
}

func (r *legacyItemResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_legacy_item"
}

func (r *legacyItemResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "An item of the store in the layout before tfhttp_item; move it to tfhttp_item.",
		Attributes: map[string]schema.Attribute{
			"id":       schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name":     schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"content":  schema.StringAttribute{Required: true},
			"revision": schema.Int64Attribute{Computed: true},
		},
	}
}

func (r *legacyItemResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		r.client = c
	}
}

func (r *legacyItemResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m legacyItemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !r.put(&m, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, m.Revision.ValueInt64())...)
}

func (r *legacyItemResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m legacyItemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !r.put(&m, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, m.Revision.ValueInt64())...)
}

// put writes the item m describes (a legacy item has size 1) and sets m's
// id and revision to what the store answered; false (with an error in
// diags) when the store refused.
func (r *legacyItemResource) put(m *legacyItemModel, diags *diag.Diagnostics) bool {
	written, err := r.client.put(&item{Name: m.Name.ValueString(), Value: m.Content.ValueString(), Size: 1}, "")
	if err != nil {
		diags.AddError("Cannot write the item", err.Error())
		return false
	}
	m.ID, m.Revision = types.StringValue(written.ID), types.Int64Value(written.Revision)
	return true
}

func (r *legacyItemResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m legacyItemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	it, err := r.client.get(m.Name.ValueString())
	if errors.Is(err, errNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the item", err.Error())
		return
	}
	m.Content, m.Revision = types.StringValue(it.Value), types.Int64Value(it.Revision)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, it.Revision)...)
}

func (r *legacyItemResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m legacyItemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.delete(m.Name.ValueString()); err != nil {
		resp.Diagnostics.AddError("Cannot delete the item", err.Error())
	}
}

// MoveState takes `tfhttp_legacy_item` objects (`moved { from =
// tfhttp_legacy_item.a  to = tfhttp_item.a }`): `content` becomes `value`,
// the rest of the item is as a legacy item is made, and the revision kept
// in the legacy item's private state carries over, so that the next
// update still sends it.
func (r *itemResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if req.SourceTypeName != "tfhttp_legacy_item" {
			return // the framework refuses a move no mover takes
		}
		var old struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Content  string `json:"content"`
			Revision int64  `json:"revision"`
		}
		if err := json.Unmarshal(req.SourceRawState.JSON, &old); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("content"), "Cannot read the tfhttp_legacy_item state", err.Error())
			return
		}
		moved := itemModel{
			ID: types.StringValue(old.ID), Name: types.StringValue(old.Name), Value: types.StringValue(old.Content),
			Size: types.Int64Value(1), Labels: types.MapNull(types.StringType),
			Settings: types.ObjectNull(settingsTypes), Rules: types.ListNull(types.ObjectType{AttrTypes: ruleTypes}),
			Note:     types.ListValueMust(types.ObjectType{AttrTypes: noteTypes}, nil),
			Password: types.StringNull(), Secret: types.StringNull(), Revision: types.Int64Value(old.Revision),
		}
		resp.Diagnostics.Append(resp.TargetState.Set(ctx, &moved)...)
		etag, diags := req.SourcePrivate.GetKey(ctx, "etag")
		resp.Diagnostics.Append(diags...)
		if etag != nil {
			resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, "etag", etag)...)
		}
	}}}
}
