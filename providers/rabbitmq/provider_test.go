package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cairn "cairn.dev/sdk-go"
)

// plan plans config over prior for typeName, as the host would ask.
func plan(t *testing.T, typeName string, prior, config cairn.Object) *cairn.PlanResponse {
	t.Helper()
	p := &provider{}
	schema := resourceTypes[typeName].schema()
	resp, err := p.Plan(cairn.ProposedRequest(typeName, &schema, prior, config))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestTheSchemaHasNoMistakes(t *testing.T) {
	if errs := (&provider{}).Schema().Check(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestUnsetSettingsArePlannedAsRabbitMQsDefaults(t *testing.T) {
	resp := plan(t, "rabbitmq_exchange", nil, cairn.Object{
		"name": "events", "vhost": nil, "id": nil,
		"settings": cairn.Object{"type": "topic", "durable": nil, "auto_delete": nil, "internal": nil, "arguments": nil},
	})
	want := cairn.Object{
		"id": "events@/", "name": "events", "vhost": "/",
		"settings": cairn.Object{"type": "topic", "durable": false, "auto_delete": false, "internal": false, "arguments": cairn.Map{}},
	}
	if !cairn.Equal(resp.PlannedState, want) {
		t.Errorf("planned %#v", resp.PlannedState)
	}
}

func TestChangedQueueSettingsReplaceTheQueue(t *testing.T) {
	prior := cairn.Object{
		"id": "orders@/", "name": "orders", "vhost": "/",
		"settings": cairn.Object{"durable": true, "auto_delete": false, "arguments": cairn.Map{"x-max-length": "10"}},
	}
	config := cairn.Object{
		"id": nil, "name": "orders", "vhost": nil,
		"settings": cairn.Object{"durable": true, "auto_delete": nil, "arguments": cairn.Map{"x-max-length": "20"}},
	}
	if resp := plan(t, "rabbitmq_queue", prior, config); !resp.IsReplacing() {
		t.Error("a new argument must replace the queue")
	}
	config["settings"].(cairn.Object)["arguments"] = cairn.Map{"x-max-length": "10"}
	if resp := plan(t, "rabbitmq_queue", prior, config); resp.IsReplacing() || !cairn.Equal(resp.PlannedState, prior) {
		t.Errorf("the same settings plan no change: %#v", resp.PlannedState)
	}
}

func TestABindingsKeyIsKnownOnlyOnceItExists(t *testing.T) {
	config := cairn.Object{
		"id": nil, "vhost": "/", "source": "events", "destination": "orders", "destination_type": "queue",
		"routing_key": "orders.#", "arguments": nil, "properties_key": nil,
	}
	resp := plan(t, "rabbitmq_binding", nil, config)
	if !cairn.IsUnknown(resp.PlannedState["properties_key"]) || !cairn.IsUnknown(resp.PlannedState["id"]) {
		t.Errorf("planned %#v", resp.PlannedState)
	}
}

func TestCredentialsInTheProviderBlockAreRefused(t *testing.T) {
	err := (&provider{}).Configure(cairn.Object{"endpoint": "http://127.0.0.1:15672", "username": "guest", "password": nil})
	if err == nil || !strings.Contains(err.Error(), "takes no username or password") {
		t.Errorf("%v", err)
	}
}

// A delete answered 404 is success: the object is gone either way.
func TestDeletingWhatIsGoneSucceeds(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || r.URL.EscapedPath() != "/api/queues/%2F/orders" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.EscapedPath())
		}
		http.Error(w, `{"error":"Object Not Found","reason":"Not Found"}`, http.StatusNotFound)
	}))
	defer server.Close()
	p := &provider{transport: http.DefaultTransport, logf: t.Logf}
	if err := p.Configure(cairn.Object{"endpoint": server.URL}); err != nil {
		t.Fatal(err)
	}
	prior := cairn.Object{"id": "orders@/", "name": "orders", "vhost": "/"}
	if _, err := p.Apply(&cairn.ApplyRequest{TypeName: "rabbitmq_queue", PriorState: prior}); err != nil {
		t.Error(err)
	}
}
