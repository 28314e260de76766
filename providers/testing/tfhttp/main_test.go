package main

// The bridge serving this framework provider natively (no component):
// every call goes through tfbridge's conversions to the framework and
// back, against an httptest store.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	cairn "cairn.dev/sdk-go"
	"cairn.dev/tfbridge"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

// store is an in-memory item store; ifMatch records the If-Match headers.
type store struct {
	mu      sync.Mutex
	items   map[string]map[string]any
	ifMatch []string
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.TrimPrefix(r.URL.Path, "/items/")
	switch r.Method {
	case http.MethodGet:
		item, ok := s.items[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(item)
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		var item map[string]any
		_ = json.Unmarshal(body, &item)
		s.ifMatch = append(s.ifMatch, r.Header.Get("If-Match"))
		revision := 1.0
		item["id"] = "i-" + name
		if prior, ok := s.items[name]; ok {
			revision = prior["revision"].(float64) + 1
		}
		item["revision"] = revision
		delete(item, "secret")
		s.items[name] = item
		_ = json.NewEncoder(w).Encode(item)
	case http.MethodDelete:
		delete(s.items, name)
		w.WriteHeader(http.StatusNoContent)
	}
}

func bridged(t *testing.T) (*tfbridge.Provider, *store) {
	t.Helper()
	s := &store{items: map[string]map[string]any{}}
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	p := tfbridge.New(providerserver.NewProtocol6(New("test")())())
	if err := p.Configure(cairn.Object{"endpoint": server.URL}); err != nil {
		t.Fatal(err)
	}
	return p, s
}

// itemConfig is a configuration as the host sends it: every attribute,
// null where unset.
func itemConfig() cairn.Object {
	return cairn.Object{
		"id": nil, "name": "alpha", "value": "hello", "size": nil, "labels": cairn.Map{"team": "web"},
		"settings": nil, "rules": []any{cairn.Object{"port": int64(80), "protocol": nil}},
		"note": []any{}, "password": nil, "secret": "s3cret", "revision": nil,
	}
}

func TestTheSchemaReachesCairnWhole(t *testing.T) {
	p := tfbridge.New(providerserver.NewProtocol6(New("test")())())
	s := p.Schema().Resources["tfhttp_item"]
	if s.Version != 1 {
		t.Fatalf("version %d", s.Version)
	}
	if a := s.Attributes["secret"]; !a.WriteOnly || !a.Sensitive || !a.Optional {
		t.Fatalf("secret: %+v", a)
	}
	if a := s.Attributes["settings"]; a.Nested == nil || a.Nested.Nesting != cairn.NestingSingle {
		t.Fatalf("settings: %+v", a)
	}
	if d := s.Attributes["settings"].Nested.Attributes["retries"].Description; !strings.Contains(d, "Deprecated: Retries are automatic.") {
		t.Fatalf("retries: %q", d)
	}
	if b, ok := s.Blocks["note"]; !ok || b.Nesting != cairn.NestingList {
		t.Fatalf("note: %+v", b)
	}
	if _, ok := p.Schema().DataSources["tfhttp_item"]; !ok {
		t.Fatal("no data source")
	}
	if errs := p.Schema().Check(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestPlanApplyReadImportAndUpgradeThroughTheBridge(t *testing.T) {
	p, s := bridged(t)
	schema := p.Schema().Resources["tfhttp_item"]
	config := itemConfig()
	plan, err := p.Plan(&cairn.PlanRequest{TypeName: "tfhttp_item", Schema: &schema, ProposedNewState: config.Clone(), Config: config})
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatal(err, plan.Diagnostics)
	}
	planned := plan.PlannedState
	if !cairn.IsUnknown(planned["id"]) || planned["size"] != int64(1) || planned["secret"] != nil {
		t.Fatalf("planned: %#v", planned)
	}
	if rules := planned["rules"].([]any); rules[0].(cairn.Object)["protocol"] != "tcp" {
		t.Fatalf("the nested default was not planned: %#v", rules)
	}
	applied, err := p.Apply(&cairn.ApplyRequest{TypeName: "tfhttp_item", Schema: &schema, PlannedState: planned, Config: config, PlannedPrivate: plan.PlannedPrivate})
	if err != nil || applied.Diagnostics.HasErrors() {
		t.Fatal(err, applied.Diagnostics)
	}
	state := applied.NewState
	if state["id"] != "i-alpha" || state["revision"] != int64(1) || state["secret"] != nil {
		t.Fatalf("state: %#v", state)
	}
	if !strings.Contains(string(applied.Private), `"etag"`) {
		t.Fatalf("no private state: %q", applied.Private)
	}

	// An update sends the revision kept in private state.
	updated := config.Clone()
	updated["value"] = "again"
	proposed := updated.Clone()
	proposed["id"], proposed["size"], proposed["revision"] = state["id"], state["size"], state["revision"]
	proposed["rules"] = state["rules"]
	plan, err = p.Plan(&cairn.PlanRequest{TypeName: "tfhttp_item", Schema: &schema, PriorState: state, ProposedNewState: proposed, Config: updated, PriorPrivate: applied.Private})
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatal(err, plan.Diagnostics)
	}
	if plan.PlannedState["id"] != "i-alpha" || !cairn.IsUnknown(plan.PlannedState["revision"]) {
		t.Fatalf("UseStateForUnknown keeps the id, the revision is unknown: %#v", plan.PlannedState)
	}
	// The framework's RequiresReplace names the name only when it changes.
	if len(plan.RequiresReplace) != 0 {
		t.Fatalf("requires replace: %v", plan.RequiresReplace)
	}
	applied, err = p.Apply(&cairn.ApplyRequest{TypeName: "tfhttp_item", Schema: &schema, PriorState: state, PlannedState: plan.PlannedState, Config: updated, PlannedPrivate: plan.PlannedPrivate})
	if err != nil || applied.Diagnostics.HasErrors() {
		t.Fatal(err, applied.Diagnostics)
	}
	if got := s.ifMatch; len(got) != 2 || got[0] != "" || got[1] != "1" {
		t.Fatalf("If-Match headers: %q", got)
	}

	read, err := p.ReadResource(&cairn.ReadRequest{TypeName: "tfhttp_item", Schema: &schema, CurrentState: applied.NewState, Private: applied.Private})
	if err != nil || read.Diagnostics.HasErrors() || read.NewState["value"] != "again" {
		t.Fatal(err, read)
	}

	imported, err := p.ImportResources("tfhttp_item", "alpha")
	if err != nil || len(imported.Imported) != 1 || imported.Imported[0].State["name"] != "alpha" {
		t.Fatal(err, imported)
	}

	upgraded, err := p.UpgradeState("tfhttp_item", 0, `{"id":"i-old","name":"old","content":"from v0"}`)
	if err != nil || upgraded["value"] != "from v0" || upgraded["size"] != int64(1) {
		t.Fatalf("upgrade: %v %#v", err, upgraded)
	}

	data, err := p.ReadDataSource("tfhttp_item", cairn.Object{"name": "alpha", "id": nil, "value": nil, "revision": nil})
	if err != nil || data["revision"] != int64(2) {
		t.Fatalf("data source: %v %#v", err, data)
	}
}

func TestValidatorDiagnosticsCarryTheirAttributePath(t *testing.T) {
	p, _ := bridged(t)
	config := itemConfig()
	config["rules"] = []any{cairn.Object{"port": int64(70000), "protocol": nil}}
	err := p.Validate("tfhttp_item", config)
	ds, ok := err.(cairn.Diagnostics)
	if !ok || !ds.HasErrors() {
		t.Fatalf("want diagnostics, got %v", err)
	}
	if got := ds[0].Path.String(); got != ".rules[0].port" {
		t.Fatalf("path %q: %v", got, ds)
	}
}

// A tfhttp_legacy_item moves to tfhttp_item through MoveResourceState:
// content becomes value, and the revision kept in private state carries
// over, so the first update of the moved item sends it.
func TestMoveStateAcrossTypesThroughTheBridge(t *testing.T) {
	p, s := bridged(t)
	legacySchema := p.Schema().Resources["tfhttp_legacy_item"]
	legacy := cairn.Object{"id": nil, "name": "old", "content": "kept", "revision": nil}
	plan, err := p.Plan(&cairn.PlanRequest{TypeName: "tfhttp_legacy_item", Schema: &legacySchema, ProposedNewState: legacy.Clone(), Config: legacy})
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatal(err, plan.Diagnostics)
	}
	made, err := p.Apply(&cairn.ApplyRequest{TypeName: "tfhttp_legacy_item", Schema: &legacySchema, PlannedState: plan.PlannedState, Config: legacy})
	if err != nil || made.Diagnostics.HasErrors() {
		t.Fatal(err, made.Diagnostics)
	}
	stored, err := json.Marshal(made.NewState)
	if err != nil {
		t.Fatal(err)
	}

	moved, err := p.MoveState(&cairn.MoveStateRequest{
		SourceProviderAddress: "registry.terraform.io/example/tfhttp", SourceTypeName: "tfhttp_legacy_item",
		SourceStateJSON: string(stored), SourcePrivate: made.Private, TargetTypeName: "tfhttp_item",
	})
	if err != nil {
		t.Fatal(err)
	}
	state := moved.TargetState
	if state["id"] != "i-old" || state["value"] != "kept" || state["size"] != int64(1) || state["revision"] != int64(1) {
		t.Fatalf("moved state: %#v", state)
	}
	if !strings.Contains(string(moved.TargetPrivate), `"etag"`) {
		t.Fatalf("the private state did not carry over: %q", moved.TargetPrivate)
	}

	schema := p.Schema().Resources["tfhttp_item"]
	config := cairn.Object{
		"id": nil, "name": "old", "value": "changed", "size": nil, "labels": nil, "settings": nil, "rules": nil,
		"note": []any{}, "password": nil, "secret": nil, "revision": nil,
	}
	proposed := config.Clone()
	proposed["id"], proposed["size"], proposed["revision"] = state["id"], state["size"], state["revision"]
	update, err := p.Plan(&cairn.PlanRequest{TypeName: "tfhttp_item", Schema: &schema, PriorState: state, ProposedNewState: proposed, Config: config, PriorPrivate: moved.TargetPrivate})
	if err != nil || update.Diagnostics.HasErrors() {
		t.Fatal(err, update.Diagnostics)
	}
	applied, err := p.Apply(&cairn.ApplyRequest{TypeName: "tfhttp_item", Schema: &schema, PriorState: state, PlannedState: update.PlannedState, Config: config, PlannedPrivate: update.PlannedPrivate})
	if err != nil || applied.Diagnostics.HasErrors() {
		t.Fatal(err, applied.Diagnostics)
	}
	if got := s.ifMatch; len(got) != 2 || got[1] != "1" {
		t.Fatalf("If-Match headers: %q", got)
	}

	// A type no mover takes: the framework's error, naming both types.
	_, err = p.MoveState(&cairn.MoveStateRequest{
		SourceProviderAddress: "registry.terraform.io/hashicorp/null", SourceTypeName: "null_resource",
		SourceStateJSON: `{"id":"1"}`, TargetTypeName: "tfhttp_item",
	})
	if err == nil || !strings.Contains(err.Error(), "null_resource") {
		t.Fatalf("a move from null_resource: %v", err)
	}
}
