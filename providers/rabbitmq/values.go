package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	cairn "cairn.dev/sdk-go"
)

// joinID is the `name@vhost` id the community provider gives exchanges,
// queues, permissions and policies (and takes for import).
func joinID(name, vhost string) string { return name + "@" + vhost }

// splitID splits a `name@vhost` id at its last `@` (a name may hold one).
func splitID(id, what string) (name, vhost string, err error) {
	i := strings.LastIndex(id, "@")
	if i <= 0 || i == len(id)-1 {
		return "", "", fmt.Errorf("%q is not a %s id: write it NAME@VHOST, such as `orders@/`", id, what)
	}
	return id[:i], id[i+1:], nil
}

// integerArguments are the queue, exchange and binding arguments RabbitMQ
// takes only as integers; booleanArguments only as booleans. Every other
// argument is sent as the string written in configuration.
var (
	integerArguments = map[string]bool{
		"x-message-ttl": true, "x-expires": true, "x-max-length": true, "x-max-length-bytes": true,
		"x-max-priority": true, "x-delivery-limit": true, "x-quorum-initial-group-size": true,
		"x-initial-cluster-size": true, "x-stream-max-segment-size-bytes": true,
		"x-max-in-memory-length": true, "x-max-in-memory-bytes": true,
	}
	booleanArguments = map[string]bool{"x-single-active-consumer": true}
)

// argumentsToAPI turns `arguments` (a map of strings in configuration)
// into what RabbitMQ takes: integers and booleans where it wants them.
func argumentsToAPI(args map[string]string, at cairn.Path) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := args[k]
		switch {
		case integerArguments[k]:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, atKey(cairn.Errorf("Argument %q must be a whole number, not %q", k, v), at, k)
			}
			out[k] = n
		case booleanArguments[k]:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, atKey(cairn.Errorf("Argument %q must be true or false, not %q", k, v), at, k)
			}
			out[k] = b
		default:
			out[k] = v
		}
	}
	return out, nil
}

// atKey points d at the element key of the map at path at.
func atKey(d *cairn.Diagnostic, at cairn.Path, key string) *cairn.Diagnostic {
	d.Path = append(append(cairn.Path{}, at...), cairn.PathStep{Key: key, IsKey: true})
	return d
}

// definitionToAPI turns a policy's `definition` (strings in
// configuration) into RabbitMQ's typed values: a whole number is sent as
// a number, true and false as booleans, a JSON list or object as itself,
// anything else as a string (`ha-mode`, `queue-mode`…).
func definitionToAPI(def map[string]string) map[string]any {
	out := make(map[string]any, len(def))
	for k, v := range def {
		out[k] = typedValue(v)
	}
	return out
}

func typedValue(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if v == "true" || v == "false" {
		return v == "true"
	}
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return x
		}
	}
	return v
}

// stringsFromAPI turns RabbitMQ's typed argument or definition values
// back into the strings configuration writes: numbers as whole numbers
// where they are, booleans as true/false, lists and objects as JSON.
func stringsFromAPI(values map[string]any) cairn.Map {
	out := cairn.Map{}
	for k, v := range values {
		out[k] = stringFromAPI(v)
	}
	return out
}

func stringFromAPI(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return ""
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// passwordMatches reports whether password is the one RabbitMQ stored as
// hash with rabbit_password_hashing_sha256: base64 of a 4-byte salt then
// SHA-256(salt ‖ password). ok is false when the algorithm is another (the
// answer is then unknown).
func passwordMatches(algorithm, hash, password string) (matches, ok bool) {
	if algorithm != "rabbit_password_hashing_sha256" {
		return false, false
	}
	raw, err := base64.StdEncoding.DecodeString(hash)
	if err != nil || len(raw) != 4+sha256.Size {
		return false, true
	}
	salt := raw[:4]
	sum := sha256.Sum256(append(append([]byte{}, salt...), password...))
	return subtle.ConstantTimeCompare(sum[:], raw[4:]) == 1, true
}

// stringMap is attribute name of o (a map of strings) as a Go map; an
// absent or null map is empty.
func stringMap(o cairn.Object, name string) map[string]string {
	m, _ := o.StringMap(name)
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// stringList turns Go strings into a list value.
func stringList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// mapValue turns a Go map of strings into a map value.
func mapValue(m map[string]string) cairn.Map {
	out := cairn.Map{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
