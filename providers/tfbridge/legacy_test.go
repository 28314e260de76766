package tfbridge

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// widgetBlock is an SDKv2-like schema: optional attributes, one computed,
// a set of tag blocks, a list of at most one settings block.
var widgetBlock = &tfprotov6.SchemaBlock{
	Attributes: []*tfprotov6.SchemaAttribute{
		{Name: "name", Type: tftypes.String, Required: true},
		{Name: "color", Type: tftypes.String, Optional: true},
		{Name: "size", Type: tftypes.Number, Optional: true},
		{Name: "id", Type: tftypes.String, Optional: true, Computed: true},
	},
	BlockTypes: []*tfprotov6.SchemaNestedBlock{
		{TypeName: "tag", Nesting: tfprotov6.SchemaNestedBlockNestingModeSet, Block: &tfprotov6.SchemaBlock{
			Attributes: []*tfprotov6.SchemaAttribute{
				{Name: "key", Type: tftypes.String, Required: true},
				{Name: "value", Type: tftypes.String, Optional: true},
				{Name: "enabled", Type: tftypes.Bool, Optional: true},
			},
		}},
		{TypeName: "settings", Nesting: tfprotov6.SchemaNestedBlockNestingModeList, Block: &tfprotov6.SchemaBlock{
			Attributes: []*tfprotov6.SchemaAttribute{
				{Name: "mode", Type: tftypes.String, Optional: true},
				{Name: "retries", Type: tftypes.Number, Optional: true},
			},
		}},
	},
}

var (
	widgetType   = widgetBlock.ValueType().(tftypes.Object)
	tagType      = widgetType.AttributeTypes["tag"].(tftypes.Set).ElementType
	settingsType = widgetType.AttributeTypes["settings"].(tftypes.List).ElementType
)

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
func num(n int64) tftypes.Value  { return tftypes.NewValue(tftypes.Number, n) }
func boolean(b bool) tftypes.Value {
	return tftypes.NewValue(tftypes.Bool, b)
}
func null(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, nil) }

func tag(key string, value, enabled tftypes.Value) tftypes.Value {
	return tftypes.NewValue(tagType, map[string]tftypes.Value{"key": str(key), "value": value, "enabled": enabled})
}

func settings(mode, retries tftypes.Value) tftypes.Value {
	return tftypes.NewValue(settingsType, map[string]tftypes.Value{"mode": mode, "retries": retries})
}

// widget is a widget object; tags and settings nil are null collections.
func widget(color, size, id tftypes.Value, tags, sets []tftypes.Value) tftypes.Value {
	tagsValue := tftypes.NewValue(widgetType.AttributeTypes["tag"], tags)
	setsValue := tftypes.NewValue(widgetType.AttributeTypes["settings"], sets)
	return tftypes.NewValue(widgetType, map[string]tftypes.Value{
		"name": str("w"), "color": color, "size": size, "id": id, "tag": tagsValue, "settings": setsValue,
	})
}

func assertEqual(t *testing.T, got, want tftypes.Value) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("normalised wrongly:\n got %s\nwant %s", got, want)
	}
}

// SDKv2 answers "" and false for attributes of a set's block that the
// configuration leaves null; the block is paired with its configured one
// and they are made null again.
func TestZeroValuesInASetOfBlocksAreMadeNullWhereTheConfigurationIsNull(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String),
		[]tftypes.Value{tag("env", str("prod"), null(tftypes.Bool)), tag("tier", null(tftypes.String), boolean(true))}, []tftypes.Value{})
	planned := widget(null(tftypes.String), null(tftypes.Number), tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
		[]tftypes.Value{tag("tier", str(""), boolean(true)), tag("env", str("prod"), boolean(false))}, []tftypes.Value{})
	want := widget(null(tftypes.String), null(tftypes.Number), tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
		[]tftypes.Value{tag("tier", null(tftypes.String), boolean(true)), tag("env", str("prod"), null(tftypes.Bool))}, []tftypes.Value{})
	assertEqual(t, normaliseBlock(widgetBlock, planned, config), want)
}

// A configured zero value stays: only null in the reference makes null.
func TestConfiguredZeroValuesStay(t *testing.T) {
	config := widget(str(""), num(0), null(tftypes.String), []tftypes.Value{tag("a", str(""), boolean(false))},
		[]tftypes.Value{settings(str(""), num(0))})
	assertEqual(t, normaliseBlock(widgetBlock, config, config), config)
}

// Computed attributes are the provider's to fill in, zero or not.
func TestComputedAttributesKeepTheirZeroValue(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), []tftypes.Value{}, []tftypes.Value{})
	planned := widget(null(tftypes.String), null(tftypes.Number), str(""), []tftypes.Value{}, []tftypes.Value{})
	assertEqual(t, normaliseBlock(widgetBlock, planned, config), planned)
}

// A list of blocks is paired by index; top-level zero values under null
// configuration are made null too.
func TestZeroValuesInAListOfBlocksAndAtTheTopAreMadeNull(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), []tftypes.Value{},
		[]tftypes.Value{settings(str("auto"), null(tftypes.Number))})
	planned := widget(str(""), num(0), null(tftypes.String), []tftypes.Value{},
		[]tftypes.Value{settings(str("auto"), num(0))})
	assertEqual(t, normaliseBlock(widgetBlock, planned, config), config)
}

// No blocks is an empty collection, not null.
func TestNullBlocksWhereTheReferenceHasNoneAreEmpty(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), []tftypes.Value{}, []tftypes.Value{})
	planned := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), nil, nil)
	assertEqual(t, normaliseBlock(widgetBlock, planned, config), config)
}

// A set block that matches no configured block, even normalised, is left
// for the host to refuse.
func TestAnUnconfiguredSetBlockIsLeftAsItIs(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String),
		[]tftypes.Value{tag("env", null(tftypes.String), null(tftypes.Bool))}, []tftypes.Value{})
	planned := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String),
		[]tftypes.Value{tag("other", str(""), boolean(false))}, []tftypes.Value{})
	assertEqual(t, normaliseBlock(widgetBlock, planned, config), planned)
}

// Attributes with defaults are declared computed in the schema the host
// sees, and the provider is proposed null for them where the
// configuration is null, as Terraform proposes for its own schema.
func TestDefaultsAreDeclaredComputedAndProposedAsConfigured(t *testing.T) {
	paths := [][]string{{"size"}, {"settings", "mode"}}
	declared := withComputed(widgetBlock, paths)
	computed := map[string]bool{}
	for _, a := range declared.Attributes {
		computed[a.Name] = a.Computed
	}
	if !computed["size"] || computed["color"] {
		t.Fatalf("size should be computed and color not: %v", computed)
	}
	if mode := declared.BlockTypes[1].Block.Attributes[0]; mode.Name != "mode" || !mode.Computed || !mode.Optional {
		t.Fatalf("settings.mode should be optional and computed: %+v", mode)
	}
	if widgetBlock.Attributes[2].Computed {
		t.Fatal("the provider's own schema was changed")
	}
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), []tftypes.Value{},
		[]tftypes.Value{settings(null(tftypes.String), num(1))})
	proposed := widget(null(tftypes.String), num(5), null(tftypes.String), []tftypes.Value{},
		[]tftypes.Value{settings(str("manual"), num(1))})
	assertEqual(t, defaultsProposed(declared, proposed, config, paths), config)
}

// fakeServer answers every plan with planned, declaring the legacy type
// system or not.
type fakeServer struct {
	tfprotov6.ProviderServer
	planned *tfprotov6.DynamicValue
	legacy  bool
}

func (f *fakeServer) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{ResourceSchemas: map[string]*tfprotov6.Schema{"widget": {Block: widgetBlock}}}, nil
}

func (f *fakeServer) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: f.planned, UnsafeToUseLegacyTypeSystem: f.legacy}, nil
}

func dynamic(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(widgetType, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// Only an answer that declares the legacy type system is normalised.
func TestOnlyLegacyAnswersAreNormalised(t *testing.T) {
	config := widget(null(tftypes.String), null(tftypes.Number), null(tftypes.String), []tftypes.Value{}, []tftypes.Value{})
	planned := widget(str(""), null(tftypes.Number), null(tftypes.String), []tftypes.Value{}, []tftypes.Value{})
	for _, legacy := range []bool{true, false} {
		s := normaliseLegacy(&fakeServer{planned: dynamic(t, planned), legacy: legacy}, nil)
		if _, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
			t.Fatal(err)
		}
		resp, err := s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
			TypeName: "widget", Config: dynamic(t, config), ProposedNewState: dynamic(t, config), PriorState: dynamic(t, null(widgetType)),
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := resp.PlannedState.Unmarshal(widgetType)
		if err != nil {
			t.Fatal(err)
		}
		want := planned
		if legacy {
			want = config
		}
		assertEqual(t, got, want)
	}
}
