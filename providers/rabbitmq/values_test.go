package main

import (
	"testing"

	cairn "cairn.dev/sdk-go"
)

func TestPasswordMatchesRabbitMQsSaltedSHA256(t *testing.T) {
	// The hash RabbitMQ 3.10 stored for the password "pw".
	hash := "24HaZXUAi49BoAvukG86kUBgZeO6sBFdQsP1VzsjZTsqQ2F7"
	if m, ok := passwordMatches("rabbit_password_hashing_sha256", hash, "pw"); !m || !ok {
		t.Errorf("pw: matches %v, known %v", m, ok)
	}
	if m, ok := passwordMatches("rabbit_password_hashing_sha256", hash, "other"); m || !ok {
		t.Errorf("other: matches %v, known %v", m, ok)
	}
	if _, ok := passwordMatches("rabbit_password_hashing_sha512", hash, "pw"); ok {
		t.Error("another algorithm cannot be checked")
	}
}

func TestArgumentsAreTypedAsRabbitMQTakesThem(t *testing.T) {
	got, err := argumentsToAPI(map[string]string{"x-max-length": "10", "x-queue-type": "quorum", "x-single-active-consumer": "true"}, cairn.At("arguments"))
	if err != nil {
		t.Fatal(err)
	}
	if got["x-max-length"] != int64(10) || got["x-queue-type"] != "quorum" || got["x-single-active-consumer"] != true {
		t.Errorf("%#v", got)
	}
	_, err = argumentsToAPI(map[string]string{"x-max-length": "ten"}, cairn.At("settings", "arguments"))
	if err == nil || err.Error() != `Argument "x-max-length" must be a whole number, not "ten" (at .settings.arguments["x-max-length"])` {
		t.Errorf("%v", err)
	}
	back := stringsFromAPI(map[string]any{"x-max-length": float64(10), "x-queue-type": "quorum", "flag": true, "nodes": []any{"a"}})
	want := cairn.Map{"x-max-length": "10", "x-queue-type": "quorum", "flag": "true", "nodes": `["a"]`}
	if !cairn.Equal(back, want) {
		t.Errorf("%#v", back)
	}
}

func TestPolicyDefinitionsAreTyped(t *testing.T) {
	got := definitionToAPI(map[string]string{"max-length": "5", "ha-mode": "exactly", "ha-sync-batch-size": "x1", "flag": "false", "nodes": `["a","b"]`})
	if got["max-length"] != int64(5) || got["ha-mode"] != "exactly" || got["ha-sync-batch-size"] != "x1" || got["flag"] != false {
		t.Errorf("%#v", got)
	}
	if nodes, ok := got["nodes"].([]any); !ok || len(nodes) != 2 {
		t.Errorf("%#v", got["nodes"])
	}
}

func TestIDsSplitAtTheLastAt(t *testing.T) {
	name, vhost, err := splitID("a@b@/", "rabbitmq_queue")
	if err != nil || name != "a@b" || vhost != "/" {
		t.Errorf("%q %q %v", name, vhost, err)
	}
	if _, _, err := splitID("orders", "rabbitmq_queue"); err == nil {
		t.Error("an id without @ is refused")
	}
}

func TestBindingPathsAndIDsEncodeTheVirtualHost(t *testing.T) {
	ends := bindingEnds{vhost: "/", source: "events", destination: "audit", destinationType: "queue"}
	if got := ends.apiPath("a.%23"); got != "/api/bindings/%2F/e/events/q/audit/a.%2523" {
		t.Error(got)
	}
	if got := ends.id("~"); got != "%2F/events/audit/queue/~" {
		t.Error(got)
	}
}
