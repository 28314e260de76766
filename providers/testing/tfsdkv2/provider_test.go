package main

// The provider through the bridge's protocol 5 path, natively: the real
// SDKv2 GRPCProviderServer, upgraded by tf5to6server, its answers
// normalised (tfbridge's legacy.go) as the component's are.

import (
	"context"
	"testing"

	"cairn.dev/tfbridge"
	"cairn.dev/tfbridge/sdkv2"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func bridged(t *testing.T) (tfprotov6.ProviderServer, *tfprotov6.Schema) {
	t.Helper()
	p := Provider()
	server := tfbridge.UpgradeV5(p.GRPCProvider, sdkv2.DefaultsOf(p))
	ctx := context.Background()
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	config, _ := tfprotov6.NewDynamicValue(schemas.Provider.ValueType(), tftypes.NewValue(schemas.Provider.ValueType(), map[string]tftypes.Value{"prefix": tftypes.NewValue(tftypes.String, nil)}))
	configured, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.0", Config: &config})
	if err != nil || len(configured.Diagnostics) > 0 {
		t.Fatalf("ConfigureProvider: %v %v", err, configured.Diagnostics)
	}
	return server, schemas.ResourceSchemas["tfsdkv2_widget"]
}

// attr is the attribute name of the widget's schema.
func attr(s *tfprotov6.Schema, name string) *tfprotov6.SchemaAttribute {
	for _, a := range s.Block.Attributes {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func TestDefaultsAreOptionalAndComputed(t *testing.T) {
	_, widget := bridged(t)
	if a := attr(widget, "size"); !a.Optional || !a.Computed {
		t.Errorf("size (Default 3) should be optional and computed: %+v", a)
	}
	if a := attr(widget, "color"); a.Computed {
		t.Errorf("color (no default) should not be computed: %+v", a)
	}
}

// A create's plan: the default filled in, the unset value of a tag block
// null (SDKv2 answers ""), the settings block's mode defaulted.
func TestACreatePlanIsNormalised(t *testing.T) {
	server, widget := bridged(t)
	typ := widget.ValueType().(tftypes.Object)
	tagType := typ.AttributeTypes["tag"].(tftypes.Set).ElementType
	settingsType := typ.AttributeTypes["settings"].(tftypes.List).ElementType
	s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
	null := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, nil) }
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = null(at)
	}
	values["name"] = s("alpha")
	values["tag"] = tftypes.NewValue(typ.AttributeTypes["tag"], []tftypes.Value{
		tftypes.NewValue(tagType, map[string]tftypes.Value{"key": s("tier"), "value": null(tftypes.String)}),
	})
	values["settings"] = tftypes.NewValue(typ.AttributeTypes["settings"], []tftypes.Value{
		tftypes.NewValue(settingsType, map[string]tftypes.Value{"mode": null(tftypes.String), "retries": tftypes.NewValue(tftypes.Number, 2)}),
	})
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, values))
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := tfprotov6.NewDynamicValue(typ, null(typ))
	resp, err := server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: "tfsdkv2_widget", PriorState: &prior, ProposedNewState: &config, Config: &config,
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("PlanResourceChange: %v %v", err, resp.Diagnostics)
	}
	planned, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]tftypes.Value
	if err := planned.As(&got); err != nil {
		t.Fatal(err)
	}
	if !got["size"].Equal(tftypes.NewValue(tftypes.Number, 3)) {
		t.Errorf("size: planned %s, want the default 3", got["size"])
	}
	wantTags := tftypes.NewValue(typ.AttributeTypes["tag"], []tftypes.Value{
		tftypes.NewValue(tagType, map[string]tftypes.Value{"key": s("tier"), "value": null(tftypes.String)}),
	})
	if !got["tag"].Equal(wantTags) {
		t.Errorf("tag: planned %s, want %s", got["tag"], wantTags)
	}
	wantSettings := tftypes.NewValue(typ.AttributeTypes["settings"], []tftypes.Value{
		tftypes.NewValue(settingsType, map[string]tftypes.Value{"mode": s("auto"), "retries": tftypes.NewValue(tftypes.Number, 2)}),
	})
	if !got["settings"].Equal(wantSettings) {
		t.Errorf("settings: planned %s, want %s", got["settings"], wantSettings)
	}
	if !got["color"].IsNull() || !got["enabled"].IsNull() {
		t.Errorf("unset color and enabled should stay null: %s %s", got["color"], got["enabled"])
	}
}

// A version 0 widget's string size becomes a number.
func TestAVersionZeroStateIsUpgraded(t *testing.T) {
	server, widget := bridged(t)
	resp, err := server.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "tfsdkv2_widget", Version: 0,
		RawState: &tfprotov6.RawState{JSON: []byte(`{"id":"w-old","name":"old","size":"4","tag":[],"settings":[]}`)},
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("UpgradeResourceState: %v %v", err, resp.Diagnostics)
	}
	state, err := resp.UpgradedState.Unmarshal(widget.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]tftypes.Value
	if err := state.As(&got); err != nil {
		t.Fatal(err)
	}
	if !got["size"].Equal(tftypes.NewValue(tftypes.Number, 4)) {
		t.Errorf("size: upgraded to %s, want 4", got["size"])
	}
}
