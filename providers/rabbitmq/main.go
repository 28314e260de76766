// The `rabbitmq` provider: RabbitMQ's virtual hosts, users, permissions,
// exchanges, queues, bindings and policies, as Terraform users know them
// from the community provider (cyrilgdn/rabbitmq), managed through the
// management HTTP API.
//
// It is written in Go with the cairn Go SDK (providers/sdk-go) and built
// into a component with ./build.sh. Its requests go out through the host's
// wasi:http (the SDK's transport) and reach only the origin the operator
// grants, with the credentials the grant holds; the provider never sees
// them. The logic runs natively too: `go test ./...`.
package main

// main is never called: the component's exports are the entry points
// (component.go hands the provider to the SDK).
func main() {}
