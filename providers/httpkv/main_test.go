package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	cairn "cairn.dev/sdk-go"
)

// store is an in-memory key-value store speaking the API httpkv expects.
func store(t *testing.T) (*httptest.Server, map[string]*entry) {
	var mu sync.Mutex
	entries := map[string]*entry{}
	made := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		key := strings.TrimPrefix(r.URL.Path, "/kv/")
		e := entries[key]
		switch r.Method {
		case http.MethodGet:
			if e == nil {
				http.Error(w, `{"error":"no such key"}`, http.StatusNotFound)
				return
			}
		case http.MethodPut:
			var written entry
			if err := json.NewDecoder(r.Body).Decode(&written); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if e == nil {
				made++
				e = &entry{Key: key, ID: "e" + string(rune('0'+made))}
				entries[key] = e
			}
			e.Value, e.Labels, e.Revision = written.Value, written.Labels, e.Revision+1
		case http.MethodDelete:
			if e == nil {
				http.Error(w, `{"error":"no such key"}`, http.StatusNotFound)
				return
			}
			delete(entries, key)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_ = json.NewEncoder(w).Encode(e)
	}))
	t.Cleanup(srv.Close)
	return srv, entries
}

func provider(srv *httptest.Server) *httpkv {
	return &httpkv{endpoint: srv.URL, client: srv.Client()}
}

func TestApplyCreatesReadsAndDeletesAnEntry(t *testing.T) {
	srv, entries := store(t)
	p := provider(srv)
	schema := entrySchema
	planned := cairn.Object{"key": "k", "value": "v", "labels": cairn.Map{"team": "web"}, "secret": nil,
		"id": cairn.Unknown{}, "revision": cairn.Unknown{}}
	resp, err := p.Apply(&cairn.ApplyRequest{TypeName: "httpkv_entry", Schema: &schema, PlannedState: planned,
		Config: cairn.Object{"key": "k", "value": "v", "secret": "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.NewState["id"] != "e1" || resp.NewState["revision"] != int64(1) || resp.NewState["secret"] != nil {
		t.Errorf("new state %#v", resp.NewState)
	}
	read, err := p.Read(&cairn.ReadRequest{TypeName: "httpkv_entry", Schema: &schema, CurrentState: resp.NewState})
	if err != nil || !cairn.Equal(read, resp.NewState) {
		t.Errorf("read %#v, %v", read, err)
	}
	if _, err := p.Apply(&cairn.ApplyRequest{TypeName: "httpkv_entry", Schema: &schema, PriorState: resp.NewState}); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("the entry was not deleted: %v", entries)
	}
	// Gone: read says so, and a second delete succeeds.
	if read, err := p.Read(&cairn.ReadRequest{TypeName: "httpkv_entry", Schema: &schema, CurrentState: resp.NewState}); read != nil || err != nil {
		t.Errorf("read after delete: %#v, %v", read, err)
	}
	if _, err := p.Apply(&cairn.ApplyRequest{TypeName: "httpkv_entry", Schema: &schema, PriorState: resp.NewState}); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
}

func TestAnInPlaceWritePlansTheRevisionUnknownAndANewKeyReplaces(t *testing.T) {
	p := &httpkv{}
	schema := entrySchema
	prior := cairn.Object{"key": "k", "value": "v", "labels": nil, "secret": nil, "id": "e1", "revision": int64(1)}
	config := cairn.Object{"key": "k", "value": "w", "labels": nil, "secret": nil, "id": nil, "revision": nil}
	resp, err := p.Plan(cairn.ProposedRequest("httpkv_entry", &schema, prior, config))
	if err != nil {
		t.Fatal(err)
	}
	if resp.PlannedState["id"] != "e1" || !cairn.IsUnknown(resp.PlannedState["revision"]) || resp.IsReplacing() {
		t.Errorf("in place: %#v", resp.PlannedState)
	}
	config["key"] = "other"
	resp, err = p.Plan(cairn.ProposedRequest("httpkv_entry", &schema, prior, config))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsReplacing() || !cairn.IsUnknown(resp.PlannedState["id"]) {
		t.Errorf("a new key must replace the entry, its id unknown: %#v", resp.PlannedState)
	}
}

func TestTheStoreDownIsAnErrorNamingTheEndpoint(t *testing.T) {
	srv, _ := store(t)
	p := provider(srv)
	srv.Close()
	_, err := p.Import("httpkv_entry", "k")
	if err == nil || !strings.Contains(err.Error(), "Cannot reach the store at "+srv.URL) {
		t.Errorf("err = %v", err)
	}
}
