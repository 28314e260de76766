package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// itemResource is `tfhttp_item`.
type itemResource struct{ client *client }

var (
	_ resource.ResourceWithConfigure    = &itemResource{}
	_ resource.ResourceWithImportState  = &itemResource{}
	_ resource.ResourceWithUpgradeState = &itemResource{}
	_ resource.ResourceWithMoveState    = &itemResource{}
)

func newItemResource() resource.Resource { return &itemResource{} }

type itemModel struct {
	ID       types.String `tfsdk:"id"`
	Name     types.String `tfsdk:"name"`
	Value    types.String `tfsdk:"value"`
	Size     types.Int64  `tfsdk:"size"`
	Labels   types.Map    `tfsdk:"labels"`
	Settings types.Object `tfsdk:"settings"`
	Rules    types.List   `tfsdk:"rules"`
	Note     types.List   `tfsdk:"note"`
	Password types.String `tfsdk:"password"`
	Secret   types.String `tfsdk:"secret"`
	Revision types.Int64  `tfsdk:"revision"`
}

type settingsModel struct {
	Mode    types.String `tfsdk:"mode"`
	Retries types.Int64  `tfsdk:"retries"`
}

type ruleModel struct {
	Port     types.Int64  `tfsdk:"port"`
	Protocol types.String `tfsdk:"protocol"`
}

type noteModel struct {
	Text types.String `tfsdk:"text"`
}

var (
	settingsTypes = map[string]attr.Type{"mode": types.StringType, "retries": types.Int64Type}
	ruleTypes     = map[string]attr.Type{"port": types.Int64Type, "protocol": types.StringType}
	noteTypes     = map[string]attr.Type{"text": types.StringType}
)

func (r *itemResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_item"
}

func (r *itemResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version:     1,
		Description: "An item in the store.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, Description: "The store's id for the item.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, Description: "The item's name; a new name makes a new item.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{
					stringvalidator.LengthBetween(1, 64),
					stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z0-9-]+$`), "must be lowercase letters, digits and dashes"),
				},
			},
			"value": schema.StringAttribute{Required: true},
			"size": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(1),
				Validators: []validator.Int64{int64validator.Between(1, 100)},
			},
			"labels": schema.MapAttribute{ElementType: types.StringType, Optional: true},
			"settings": schema.SingleNestedAttribute{
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"mode": schema.StringAttribute{
						Optional: true, Computed: true, Default: stringdefault.StaticString("fast"),
						Validators: []validator.String{stringvalidator.OneOf("fast", "safe")},
					},
					"retries": schema.Int64Attribute{Optional: true, DeprecationMessage: "Retries are automatic."},
				},
			},
			"rules": schema.ListNestedAttribute{
				Optional: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"port": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 65535)}},
					"protocol": schema.StringAttribute{
						Optional: true, Computed: true, Default: stringdefault.StaticString("tcp"),
					},
				}},
			},
			"password": schema.StringAttribute{Optional: true, Sensitive: true},
			"secret": schema.StringAttribute{
				Optional: true, Sensitive: true, WriteOnly: true,
				Description: "Sent to the store when the item is made; never stored.",
			},
			"revision": schema.Int64Attribute{Computed: true, Description: "Counted up by every write."},
		},
		Blocks: map[string]schema.Block{
			"note": schema.ListNestedBlock{
				Validators: []validator.List{listvalidator.SizeAtMost(2)},
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"text": schema.StringAttribute{Required: true},
				}},
			},
		},
	}
}

func (r *itemResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		r.client = c
	}
}

func (r *itemResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	it, diags := toItem(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Write-only: only the configuration has it.
	it.Secret = config.Secret.ValueString()
	made, err := r.client.put(it, "")
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the item", err.Error())
		return
	}
	resp.Diagnostics.Append(fromItem(ctx, made, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, made.Revision)...)
}

func (r *itemResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state itemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	it, err := r.client.get(state.Name.ValueString())
	if errors.Is(err, errNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the item", err.Error())
		return
	}
	resp.Diagnostics.Append(fromItem(ctx, it, &state)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, it.Revision)...)
}

func (r *itemResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	it, diags := toItem(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	etag, diags := req.Private.GetKey(ctx, "etag")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var revision string
	if etag != nil {
		if err := json.Unmarshal(etag, &revision); err != nil {
			resp.Diagnostics.AddError("Malformed private state", err.Error())
			return
		}
	}
	written, err := r.client.put(it, revision)
	if err != nil {
		resp.Diagnostics.AddError("Cannot update the item", err.Error())
		return
	}
	resp.Diagnostics.Append(fromItem(ctx, written, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(setEtag(ctx, resp.Private, written.Revision)...)
}

func (r *itemResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state itemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.delete(state.Name.ValueString()); err != nil {
		resp.Diagnostics.AddError("Cannot delete the item", err.Error())
	}
}

// ImportState adopts an item by name; Read fills in the rest.
func (r *itemResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}

// UpgradeState: version 0 called `value` `content` and had no size.
func (r *itemResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{
		0: {StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
			var old struct {
				ID      string `json:"id"`
				Name    string `json:"name"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal(req.RawState.JSON, &old); err != nil {
				resp.Diagnostics.AddError("Cannot read the version 0 state", err.Error())
				return
			}
			upgraded := itemModel{
				ID: types.StringValue(old.ID), Name: types.StringValue(old.Name), Value: types.StringValue(old.Content),
				Size: types.Int64Value(1), Labels: types.MapNull(types.StringType),
				Settings: types.ObjectNull(settingsTypes), Rules: types.ListNull(types.ObjectType{AttrTypes: ruleTypes}),
				Note:     types.ListValueMust(types.ObjectType{AttrTypes: noteTypes}, nil),
				Password: types.StringNull(), Secret: types.StringNull(), Revision: types.Int64Value(0),
			}
			resp.Diagnostics.Append(resp.State.Set(ctx, &upgraded)...)
		}},
	}
}

// privateSetter is what Create, Read and Update write private state with.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// setEtag keeps the revision last seen in private state: Update sends it
// in If-Match, so a write over someone else's is refused by the store.
func setEtag(ctx context.Context, private privateSetter, revision int64) diag.Diagnostics {
	value, _ := json.Marshal(fmt.Sprint(revision))
	return private.SetKey(ctx, "etag", value)
}

// toItem is the item a plan describes.
func toItem(ctx context.Context, m *itemModel) (*item, diag.Diagnostics) {
	var diags diag.Diagnostics
	it := &item{Name: m.Name.ValueString(), Value: m.Value.ValueString(), Size: m.Size.ValueInt64(), Password: m.Password.ValueString()}
	if !m.Labels.IsNull() && !m.Labels.IsUnknown() {
		diags.Append(m.Labels.ElementsAs(ctx, &it.Labels, false)...)
	}
	if !m.Settings.IsNull() && !m.Settings.IsUnknown() {
		var s settingsModel
		diags.Append(m.Settings.As(ctx, &s, basetypes.ObjectAsOptions{})...)
		it.Settings = &itemSettings{Mode: s.Mode.ValueString(), Retries: s.Retries.ValueInt64Pointer()}
	}
	if !m.Rules.IsNull() && !m.Rules.IsUnknown() {
		var rules []ruleModel
		diags.Append(m.Rules.ElementsAs(ctx, &rules, false)...)
		for _, r := range rules {
			it.Rules = append(it.Rules, itemRule{Port: r.Port.ValueInt64(), Protocol: r.Protocol.ValueString()})
		}
	}
	if !m.Note.IsNull() && !m.Note.IsUnknown() {
		var notes []noteModel
		diags.Append(m.Note.ElementsAs(ctx, &notes, false)...)
		for _, n := range notes {
			it.Notes = append(it.Notes, n.Text.ValueString())
		}
	}
	return it, diags
}

// fromItem sets m to the item as the store has it. Empty collections the
// store leaves out stay as m has them (null or empty), as configured.
func fromItem(ctx context.Context, it *item, m *itemModel) diag.Diagnostics {
	var diags, d diag.Diagnostics
	m.ID = types.StringValue(it.ID)
	m.Name = types.StringValue(it.Name)
	m.Value = types.StringValue(it.Value)
	m.Size = types.Int64Value(it.Size)
	m.Revision = types.Int64Value(it.Revision)
	if it.Password != "" || !m.Password.IsNull() {
		m.Password = types.StringValue(it.Password)
	}
	m.Secret = types.StringNull()
	if len(it.Labels) > 0 || m.Labels.IsUnknown() {
		m.Labels, d = types.MapValueFrom(ctx, types.StringType, it.Labels)
		diags.Append(d...)
	}
	if it.Settings != nil {
		m.Settings, d = types.ObjectValueFrom(ctx, settingsTypes, settingsModel{
			Mode: types.StringValue(it.Settings.Mode), Retries: types.Int64PointerValue(it.Settings.Retries),
		})
		diags.Append(d...)
	} else {
		m.Settings = types.ObjectNull(settingsTypes)
	}
	if len(it.Rules) > 0 || m.Rules.IsUnknown() {
		rules := make([]ruleModel, len(it.Rules))
		for i, r := range it.Rules {
			rules[i] = ruleModel{Port: types.Int64Value(r.Port), Protocol: types.StringValue(r.Protocol)}
		}
		m.Rules, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: ruleTypes}, rules)
		diags.Append(d...)
	}
	notes := make([]noteModel, len(it.Notes))
	for i, n := range it.Notes {
		notes[i] = noteModel{Text: types.StringValue(n)}
	}
	m.Note, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: noteTypes}, notes)
	diags.Append(d...)
	return diags
}
