package main

// The bridge serving this framework provider natively (no component):
// every call goes through tfbridge's conversions to the framework and
// back, against an httptest store.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	cairn "cairn.dev/sdk-go"
	"cairn.dev/tfbridge"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

// store is an in-memory item store; ifMatch records the If-Match headers,
// leases the lease calls ("open l1 deploy", "renew l1", "close l1").
type store struct {
	mu      sync.Mutex
	items   map[string]map[string]any
	ifMatch []string
	leases  []string
	open    map[string]bool
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/leases") {
		s.lease(w, r)
		return
	}
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

// lease answers POST /leases (open), POST /leases/<id>/renew and
// DELETE /leases/<id> (close); the scope `forbidden` is refused.
func (s *store) lease(w http.ResponseWriter, r *http.Request) {
	id, renew := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/leases/"), "/renew")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/leases":
		var asked struct{ Scope string }
		_ = json.NewDecoder(r.Body).Decode(&asked)
		if asked.Scope == "forbidden" {
			http.Error(w, "no leases for that scope", http.StatusForbidden)
			return
		}
		id = "l" + strconv.Itoa(len(s.open)+1)
		s.open[id] = true
		s.leases = append(s.leases, "open "+id+" "+asked.Scope)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "scope": asked.Scope, "token": "token-" + id})
	case !s.open[id]:
		http.NotFound(w, r)
	case r.Method == http.MethodPost && renew:
		s.leases = append(s.leases, "renew "+id)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
	case r.Method == http.MethodDelete:
		s.leases = append(s.leases, "close "+id)
		s.open[id] = false
		w.WriteHeader(http.StatusNoContent)
	}
}

func bridged(t *testing.T) (*tfbridge.Provider, *store) {
	t.Helper()
	s := &store{items: map[string]map[string]any{}, open: map[string]bool{}}
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

// tfhttp_lease is opened, renewed and closed through the bridge, each a
// call to the store; its token reaches a write-only attribute.
func TestALeaseIsOpenedRenewedAndClosedThroughTheBridge(t *testing.T) {
	p, s := bridged(t)
	schema, ok := p.Schema().EphemeralResources["tfhttp_lease"]
	if !ok || !schema.Attributes["token"].Sensitive || !schema.Attributes["token"].Computed {
		t.Fatalf("ephemeral resources: %#v", p.Schema().EphemeralResources)
	}
	config := cairn.Object{"scope": "deploy", "renew": true, "id": nil, "token": nil}
	if err := p.ValidateEphemeral("tfhttp_lease", config); err != nil {
		t.Fatal(err)
	}
	opened, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "tfhttp_lease", Schema: &schema, Config: config})
	if err != nil {
		t.Fatal(err)
	}
	if opened.Result["token"] != "token-l1" || opened.Result["id"] != "l1" || opened.RenewAt.IsZero() {
		t.Fatalf("opened: %#v", opened)
	}
	renewed, err := p.RenewEphemeral(&cairn.RenewEphemeralRequest{TypeName: "tfhttp_lease", Private: opened.Private})
	if err != nil {
		t.Fatal(err)
	}
	if !renewed.RenewAt.IsZero() {
		t.Errorf("a lease is renewed once: %#v", renewed)
	}
	if err := p.CloseEphemeral(&cairn.CloseEphemeralRequest{TypeName: "tfhttp_lease", Private: renewed.Private}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.leases, "|"); got != "open l1 deploy|renew l1|close l1" {
		t.Errorf("the store saw %s", got)
	}
	// Without renew, the lease asks for none.
	config["renew"] = nil
	again, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "tfhttp_lease", Schema: &schema, Config: config})
	if err != nil || !again.RenewAt.IsZero() {
		t.Fatalf("open without renew: %v %#v", err, again)
	}
}

// A refused lease is an error at `scope`; a deferred one is refused by the
// bridge; closing a lease already revoked is the store's error.
func TestLeaseErrorsNameTheirAttributeAndCause(t *testing.T) {
	p, _ := bridged(t)
	schema := p.Schema().EphemeralResources["tfhttp_lease"]
	open := func(scope string) error {
		_, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "tfhttp_lease", Schema: &schema, Config: cairn.Object{"scope": scope, "renew": nil, "id": nil, "token": nil}})
		return err
	}
	err := open("forbidden")
	ds, ok := err.(cairn.Diagnostics)
	if !ok || len(ds) != 1 || ds[0].Summary != "Cannot lease a token" || ds[0].Path.String() != ".scope" || !strings.Contains(ds[0].Detail, "no leases for that scope") {
		t.Fatalf("a refused lease: %#v", err)
	}
	if err := open("later"); err == nil || !strings.Contains(err.Error(), "the provider deferred the opening of the ephemeral resource") {
		t.Fatalf("a deferred lease: %v", err)
	}
	err = p.CloseEphemeral(&cairn.CloseEphemeralRequest{TypeName: "tfhttp_lease", Private: []byte(`{"lease":{"id":"l9"}}`)})
	if err == nil || !strings.Contains(err.Error(), "Cannot revoke the lease") {
		t.Fatalf("closing an unknown lease: %v", err)
	}
}
