package main

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// itemDataSource is `data "tfhttp_item"`: an item read by name.
type itemDataSource struct{ client *client }

var _ datasource.DataSourceWithConfigure = &itemDataSource{}

func newItemDataSource() datasource.DataSource { return &itemDataSource{} }

type itemDataModel struct {
	Name     types.String `tfsdk:"name"`
	ID       types.String `tfsdk:"id"`
	Value    types.String `tfsdk:"value"`
	Revision types.Int64  `tfsdk:"revision"`
}

func (d *itemDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_item"
}

func (d *itemDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "An item of the store, read by name.",
		Attributes: map[string]schema.Attribute{
			"name":     schema.StringAttribute{Required: true},
			"id":       schema.StringAttribute{Computed: true},
			"value":    schema.StringAttribute{Computed: true},
			"revision": schema.Int64Attribute{Computed: true},
		},
	}
}

func (d *itemDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		d.client = c
	}
}

func (d *itemDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m itemDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	it, err := d.client.get(m.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the item "+m.Name.ValueString(), err.Error())
		return
	}
	m.ID, m.Value, m.Revision = types.StringValue(it.ID), types.StringValue(it.Value), types.Int64Value(it.Revision)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
