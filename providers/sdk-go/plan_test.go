package cairn

import "testing"

func testSchema() *Schema {
	return &Schema{Block: Block{Attributes: map[string]Attr{
		"filename": {Type: String, Required: true, RequiresReplace: true},
		"content":  {Type: String, Required: true, RequiresReplace: true},
		"mode":     {Type: String, Optional: true, Computed: true, Default: "0644"},
		"tags":     {Type: MapOf(String), Optional: true},
		"token":    {Type: String, Optional: true, WriteOnly: true},
		"id":       {Type: String, Computed: true},
	}}}
}

func testConfig(content string) Object {
	return Object{"filename": "a.txt", "content": content, "mode": nil, "tags": nil, "token": nil, "id": nil}
}

func testPrior(content string) Object {
	o := testConfig(content)
	o["mode"] = "0644"
	o["id"] = "abc"
	return o
}

func TestCreateMarksUnsetComputedUnknownAndFillsDefaults(t *testing.T) {
	cfg := testConfig("x")
	cfg["token"] = "secret"
	resp := PlanFromProposed(ProposedRequest("t", testSchema(), nil, cfg))
	if !IsUnknown(resp.PlannedState["id"]) {
		t.Errorf("id = %#v, want unknown", resp.PlannedState["id"])
	}
	if resp.PlannedState["mode"] != "0644" {
		t.Errorf("mode = %#v, want the default", resp.PlannedState["mode"])
	}
	if resp.PlannedState["token"] != nil {
		t.Errorf("a write-only attribute must be planned null, got %#v", resp.PlannedState["token"])
	}
	if cfg["token"] != "secret" {
		t.Errorf("planning changed the request's configuration")
	}
	if len(resp.RequiresReplace) != 2 {
		t.Errorf("requires-replace = %v", resp.RequiresReplace)
	}
}

func TestInPlaceUpdateKeepsPriorComputedValues(t *testing.T) {
	cfg := testConfig("x")
	cfg["tags"] = Map{"k": "v"}
	resp := PlanFromProposed(ProposedRequest("t", testSchema(), testPrior("x"), cfg))
	if resp.PlannedState["id"] != "abc" || resp.IsReplacing() {
		t.Errorf("planned %#v, replacing %v", resp.PlannedState, resp.IsReplacing())
	}
}

func TestReplacementMakesStaleComputedValuesUnknownButKeepsDefaults(t *testing.T) {
	resp := PlanFromProposed(ProposedRequest("t", testSchema(), testPrior("old"), testConfig("new")))
	if !resp.IsReplacing() || !IsUnknown(resp.PlannedState["id"]) {
		t.Errorf("replacement must make id unknown: %#v", resp.PlannedState)
	}
	if resp.PlannedState["mode"] != "0644" {
		t.Errorf("a default is known on a replacement too: %#v", resp.PlannedState["mode"])
	}
}

func TestUnknownConfigInAReplacingAttributeMeansReplacement(t *testing.T) {
	cfg := testConfig("x")
	cfg["content"] = Unknown{}
	resp := PlanFromProposed(ProposedRequest("t", testSchema(), testPrior("x"), cfg))
	if !IsUnknown(resp.PlannedState["id"]) {
		t.Errorf("id = %#v, want unknown", resp.PlannedState["id"])
	}
}

func TestNoChangePlansThePriorState(t *testing.T) {
	resp := PlanFromProposed(ProposedRequest("t", testSchema(), testPrior("x"), testConfig("x")))
	if !Equal(resp.PlannedState, testPrior("x")) {
		t.Errorf("planned %#v, want the prior state", resp.PlannedState)
	}
}

func TestSetSurvivesALaterReplacement(t *testing.T) {
	schema := testSchema()
	a := schema.Attributes["content"]
	a.RequiresReplace = false
	schema.Attributes["content"] = a
	resp := PlanFromProposed(ProposedRequest("t", schema, testPrior("old"), testConfig("new")))
	resp.Set("id", "predicted").RequiresReplaceAttrs("content")
	if resp.PlannedState["id"] != "predicted" {
		t.Errorf("id = %#v", resp.PlannedState["id"])
	}
}

func TestPlannedOrKeepsKnownPlannedValues(t *testing.T) {
	req := &ApplyRequest{PlannedState: Object{"id": Unknown{}, "mode": "0600", "gone": nil}}
	if req.PlannedOr("id", func() any { return "new" }) != "new" {
		t.Error("an unknown planned value is computed")
	}
	if req.PlannedOr("mode", func() any { return "0777" }) != "0600" {
		t.Error("a known planned value is kept")
	}
	if req.PlannedOr("gone", func() any { return "x" }) != nil {
		t.Error("a planned null is kept")
	}
}

func TestSchemaCheckFindsMistakes(t *testing.T) {
	ps := &ProviderSchema{Resources: map[string]Schema{"t": {Block: Block{
		Attributes: map[string]Attr{
			"a": {Type: String},
			"b": {Type: String, Required: true, Computed: true},
			"c": {Type: String, Optional: true, Default: "x"},
		},
		Blocks: map[string]NestedBlock{"r": {Nesting: NestingList, Block: Block{Attributes: map[string]Attr{
			"p": {Type: Number, Required: true, RequiresReplace: true},
		}}}},
	}}}}
	if errs := ps.Check(); len(errs) != 4 {
		t.Errorf("want 4 mistakes, got %q", errs)
	}
}

func TestEqualComparesNumbersAndSetsByValue(t *testing.T) {
	if !Equal(int64(3), 3.0) || !Equal(3, int64(3)) || Equal(3, 3.5) {
		t.Error("numbers")
	}
	if !Equal(Set{"a", "b"}, Set{"b", "a"}) || Equal([]any{"a", "b"}, []any{"b", "a"}) {
		t.Error("sets are unordered, lists are not")
	}
	if !Equal(map[string]any{"a": 1}, Object{"a": int64(1)}) || Equal(Map{"a": 1}, Object{"a": 1}) {
		t.Error("objects and maps")
	}
}

func TestStateFromJSONTypesByTheSchema(t *testing.T) {
	s := testSchema()
	got, err := StateFromJSON(s, `{"filename":"a","content":"b","mode":"0644","tags":{"k":"v"},"token":null,"id":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["tags"].(Map); !ok {
		t.Errorf("tags = %#v, want a Map", got["tags"])
	}
	if _, err := StateFromJSON(s, `{"nope":1}`); err == nil {
		t.Error("an attribute the schema lacks is an error")
	}
}
