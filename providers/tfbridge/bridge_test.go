package tfbridge

import (
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var itemType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"name":    tftypes.String,
	"count":   tftypes.Number,
	"ratio":   tftypes.Number,
	"enabled": tftypes.Bool,
	"tags":    tftypes.Set{ElementType: tftypes.String},
	"ports":   tftypes.List{ElementType: tftypes.Number},
	"labels":  tftypes.Map{ElementType: tftypes.String},
	"pair":    tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Bool}},
	"any":     tftypes.DynamicPseudoType,
	"later":   tftypes.String,
	"none":    tftypes.String,
}}

func TestValuesRoundTripThroughMsgpack(t *testing.T) {
	in := cairn.Object{
		"name":    "web",
		"count":   int64(math.MaxInt64),
		"ratio":   0.1,
		"enabled": true,
		"tags":    cairn.Set{"a", "b"},
		"ports":   []any{int64(80), int64(443)},
		"labels":  cairn.Map{"team": "infra"},
		"pair":    cairn.Tuple{"x", false},
		"any":     cairn.Object{"nested": []any{int64(1), int64(2)}},
		"later":   cairn.Unknown{NotNull: true},
		"none":    nil,
	}
	dv, err := dynamicValue(in, itemType, "test value")
	if err != nil {
		t.Fatal(err)
	}
	out, err := objectOf(dv, itemType, "test value")
	if err != nil {
		t.Fatal(err)
	}
	// Refinements do not survive tftypes, which has none: the unknown
	// comes back plain.
	want := in.Clone()
	want["later"] = cairn.Unknown{}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("round trip changed the value:\n got %#v\nwant %#v", out, want)
	}
}

func TestNumbersAreExactOrRefused(t *testing.T) {
	at := tftypes.NewAttributePath()
	whole, _ := new(big.Float).SetString("9007199254740993")
	if n, err := numberOf(whole, at); err != nil || n != int64(9007199254740993) {
		t.Fatalf("a whole number in the int64 range must stay exact, got %v %v", n, err)
	}
	beyond, _ := new(big.Float).SetString("1e400")
	if _, err := numberOf(beyond, at); err == nil || !strings.Contains(err.Error(), "beyond what cairn carries") {
		t.Fatalf("a number beyond a double must be refused, got %v", err)
	}
	if n, err := numberOf(big.NewFloat(2.5), at); err != nil || n != 2.5 {
		t.Fatalf("2.5: %v %v", n, err)
	}
}

func TestAValueOfTheWrongTypeSaysWhere(t *testing.T) {
	_, err := dynamicValue(cairn.Object{"ports": []any{"eighty"}}, itemType, "configuration")
	if err == nil || !strings.Contains(err.Error(), "ports") || !strings.Contains(err.Error(), "expected a number") {
		t.Fatalf("want an error at ports[0], got %v", err)
	}
	_, err = dynamicValue(cairn.Object{"stray": "x"}, itemType, "configuration")
	if err == nil || !strings.Contains(err.Error(), `"stray"`) {
		t.Fatalf("want an error naming the stray attribute, got %v", err)
	}
}

func TestSchemasConvertAndRefuseWhatCairnLacks(t *testing.T) {
	s := &tfprotov6.Schema{Version: 2, Block: &tfprotov6.SchemaBlock{
		Attributes: []*tfprotov6.SchemaAttribute{
			{Name: "id", Type: tftypes.String, Computed: true},
			{Name: "old", Type: tftypes.String, Optional: true, Deprecated: true, Description: "Was used.", DeprecationMessage: "Use new."},
			{Name: "token", Type: tftypes.String, Optional: true, Sensitive: true, WriteOnly: true},
			{Name: "rules", Optional: true, NestedType: &tfprotov6.SchemaObject{
				Nesting:    tfprotov6.SchemaObjectNestingModeSet,
				Attributes: []*tfprotov6.SchemaAttribute{{Name: "port", Type: tftypes.Number, Required: true}},
			}},
		},
		BlockTypes: []*tfprotov6.SchemaNestedBlock{{
			TypeName: "listener", Nesting: tfprotov6.SchemaNestedBlockNestingModeList, MinItems: 1, MaxItems: 3,
			Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{{Name: "host", Type: tftypes.String, Required: true}}},
		}},
	}}
	out, errs := convertSchema(s)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if out.Version != 2 || !out.Attributes["token"].WriteOnly || !out.Attributes["token"].Sensitive {
		t.Fatalf("%+v", out)
	}
	if got := out.Attributes["old"].Description; got != "Was used. Deprecated: Use new." {
		t.Fatalf("deprecation: %q", got)
	}
	if n := out.Attributes["rules"].Nested; n == nil || n.Nesting != cairn.NestingSet || !n.Attributes["port"].Required {
		t.Fatalf("nested: %+v", out.Attributes["rules"])
	}
	if b := out.Blocks["listener"]; b.Nesting != cairn.NestingList || b.MinItems != 1 || b.MaxItems != 3 {
		t.Fatalf("block: %+v", b)
	}

	group := &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{
		Attributes: []*tfprotov6.SchemaAttribute{{Name: "shape", Type: tftypes.Object{
			AttributeTypes: map[string]tftypes.Type{"a": tftypes.String}, OptionalAttributes: map[string]struct{}{"a": {}},
		}, Optional: true}},
		BlockTypes: []*tfprotov6.SchemaNestedBlock{{TypeName: "timeouts", Nesting: tfprotov6.SchemaNestedBlockNestingModeGroup, Block: &tfprotov6.SchemaBlock{}}},
	}}
	_, errs = convertSchema(group)
	joined := strings.Join(errs, "\n")
	if !strings.Contains(joined, "timeouts: the block nesting mode GROUP has no cairn equivalent") ||
		!strings.Contains(joined, "shape: the object type has optional attributes (a)") {
		t.Fatalf("want both refusals, got:\n%s", joined)
	}
}

func TestPathsIntoSetsStopAtTheSet(t *testing.T) {
	p := tftypes.NewAttributePath().WithAttributeName("rules").
		WithElementKeyValue(tftypes.NewValue(tftypes.String, "x")).WithAttributeName("port")
	if got := pathOf(p); !reflect.DeepEqual(got, cairn.At("rules")) {
		t.Fatalf("got %v", got)
	}
	p = tftypes.NewAttributePath().WithAttributeName("labels").WithElementKeyString("team")
	if got := pathOf(p); !reflect.DeepEqual(got, cairn.At("labels", cairn.Key("team"))) {
		t.Fatalf("got %v", got)
	}
	p = tftypes.NewAttributePath().WithAttributeName("ports").WithElementKeyInt(2)
	if got := pathOf(p); !reflect.DeepEqual(got, cairn.At("ports", 2)) {
		t.Fatalf("got %v", got)
	}
}
