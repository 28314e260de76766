// The `httpkv` provider, written in Go with providers/sdk-go: entries of a
// key-value store that speaks plain HTTP and JSON, reached with net/http
// through the operator's `http` grant (the SDK's transport over the host's
// wasi:http; Go's wasip1 port has no sockets).
//
// The store's API (the end-to-end tests start one on loopback):
//
//	PUT    /kv/KEY  {"value": "…", "labels": {…}}  → {"key", "value", "labels", "id", "revision"}
//	GET    /kv/KEY                                → the same, or 404
//	DELETE /kv/KEY                                → 204, or 404
//
// `httpkv_entry` shows the whole lifecycle: `key` forces a replacement (and the
// server gives the new entry a new `id`, so the plan leaves it unknown),
// `value` and `labels` change in place (bumping `revision`), refresh sees an
// entry changed or deleted out of band, and `cairn import` adopts an entry
// by its key.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	cairn "cairn.dev/sdk-go"
	"cairn.dev/sdk-go/cairnhttp"
)

type httpkv struct {
	cairn.Base
	endpoint string
	client   *http.Client
}

var entrySchema = cairn.Schema{Block: cairn.Block{
	Description: "An entry of the key-value store.",
	Attributes: map[string]cairn.Attr{
		"key": {Type: cairn.String, Required: true, RequiresReplace: true,
			Description: "The entry's key; a change makes a new entry."},
		"value": {Type: cairn.String, Required: true, Description: "The entry's value."},
		"labels": {Type: cairn.MapOf(cairn.String), Optional: true,
			Description: "Labels stored with the entry."},
		"secret": {Type: cairn.String, Optional: true, Sensitive: true, WriteOnly: true,
			Description: "Sent to the store on every write, never kept in cairn's state."},
		"id": {Type: cairn.String, Computed: true,
			Description: "The store's id of the entry: new for every entry made."},
		"revision": {Type: cairn.Number, Computed: true,
			Description: "How many times the entry was written."},
	},
}}

func (*httpkv) Schema() *cairn.ProviderSchema {
	return &cairn.ProviderSchema{
		Provider: cairn.Schema{Block: cairn.Block{Attributes: map[string]cairn.Attr{
			"endpoint": {Type: cairn.String, Required: true,
				Description: "The store's base URL, such as http://127.0.0.1:8080 (grant it in the sandbox block)."},
		}}},
		Resources: map[string]cairn.Schema{"httpkv_entry": entrySchema},
	}
}

func (p *httpkv) Configure(config cairn.Object) error {
	endpoint, ok := config.String("endpoint")
	if !ok {
		return cairn.Errorf("The provider needs an endpoint").At("endpoint")
	}
	p.endpoint = strings.TrimSuffix(endpoint, "/")
	p.client = &http.Client{Transport: cairnhttp.Transport{}}
	return nil
}

func (*httpkv) Validate(typeName string, config cairn.Object) error {
	if key, ok := config.String("key"); ok && (key == "" || strings.Contains(key, "/")) {
		return cairn.Errorf("Invalid key %q", key).WithDetail("A key is not empty and has no `/`.").At("key")
	}
	return nil
}

func (*httpkv) Plan(req *cairn.PlanRequest) (*cairn.PlanResponse, error) {
	resp := cairn.PlanFromProposed(req)
	// An in-place write bumps the revision: unknown until apply. (A
	// replacement already left it unknown, with the id.)
	if !req.IsCreate() && !resp.IsReplacing() && changed(req.PriorState, resp.PlannedState, "value", "labels") {
		resp.Set("revision", cairn.Unknown{NotNull: true})
	}
	return resp, nil
}

func changed(prior, planned cairn.Object, names ...string) bool {
	for _, n := range names {
		if !cairn.Equal(prior[n], planned[n]) {
			return true
		}
	}
	return false
}

func (p *httpkv) Apply(req *cairn.ApplyRequest) (*cairn.ApplyResponse, error) {
	if req.IsDelete() {
		key, _ := req.PriorState.String("key")
		return cairn.Deleted(), p.remove(key)
	}
	if req.PriorState != nil && !cairn.Equal(req.PriorState["key"], req.PlannedState["key"]) {
		return nil, cairn.Errorf("The key cannot change in place").At("key")
	}
	key, _ := req.PlannedState.String("key")
	value, _ := req.PlannedState.String("value")
	labels, _ := req.PlannedState.StringMap("labels")
	secret, _ := req.Config.String("secret")
	e, err := p.put(key, entry{Value: value, Labels: labels, Secret: secret})
	if err != nil {
		return nil, err
	}
	cairn.Infof("httpkv: wrote %s (revision %d)", key, e.Revision)
	state := e.state()
	// `labels` null and labels {} are the same to the store: keep what was
	// planned.
	state["labels"] = req.PlannedState["labels"]
	return cairn.Applied(state), nil
}

func (p *httpkv) Read(req *cairn.ReadRequest) (cairn.Object, error) {
	key, _ := req.CurrentState.String("key")
	e, err := p.get(key)
	if err != nil || e == nil {
		return nil, err
	}
	state := e.state()
	if len(e.Labels) == 0 && req.CurrentState["labels"] == nil {
		state["labels"] = nil
	}
	return state, nil
}

func (p *httpkv) Import(typeName, id string) (cairn.Object, error) {
	e, err := p.get(id)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, cairn.Errorf("No entry with the key %q", id).WithDetail("The store at %s has no such entry.", p.endpoint)
	}
	state := e.state()
	if len(e.Labels) == 0 {
		state["labels"] = nil
	}
	return state, nil
}

// entry is the store's JSON.
type entry struct {
	Key      string            `json:"key,omitempty"`
	Value    string            `json:"value"`
	Labels   map[string]string `json:"labels,omitempty"`
	Secret   string            `json:"secret,omitempty"`
	ID       string            `json:"id,omitempty"`
	Revision int64             `json:"revision,omitempty"`
}

func (e *entry) state() cairn.Object {
	labels := cairn.Map{}
	for k, v := range e.Labels {
		labels[k] = v
	}
	return cairn.Object{"key": e.Key, "value": e.Value, "labels": labels, "secret": nil, "id": e.ID, "revision": e.Revision}
}

func (p *httpkv) url(key string) string { return p.endpoint + "/kv/" + url.PathEscape(key) }

func (p *httpkv) put(key string, e entry) (*entry, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPut, p.url(key), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	var out entry
	if _, err := p.do(req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// get is the entry, or nil when the store has none.
func (p *httpkv) get(key string) (*entry, error) {
	req, err := http.NewRequest(http.MethodGet, p.url(key), nil)
	if err != nil {
		return nil, err
	}
	var out entry
	status, err := p.do(req, &out)
	if status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (p *httpkv) remove(key string) error {
	req, err := http.NewRequest(http.MethodDelete, p.url(key), nil)
	if err != nil {
		return err
	}
	status, err := p.do(req, nil)
	if status == http.StatusNotFound {
		return nil // already gone is what a delete wants
	}
	return err
}

// do sends req and decodes a 2xx JSON answer into out; any other status is
// an error that says what the store answered.
func (p *httpkv) do(req *http.Request, out any) (int, error) {
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, cairn.Errorf("Cannot reach the store at %s", p.endpoint).WithDetail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, cairn.Errorf("Cannot read the store's answer to %s %s", req.Method, req.URL).WithDetail("%v", err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, cairn.Errorf("The store answered %s to %s %s", resp.Status, req.Method, req.URL).
			WithDetail("%s", strings.TrimSpace(string(body)))
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, fmt.Errorf("the store's answer to %s %s is not the JSON expected: %v", req.Method, req.URL, err)
		}
	}
	return resp.StatusCode, nil
}

func init() { cairn.Export(&httpkv{}) }

// main is never called: the component's exports are the entry points.
func main() {}
