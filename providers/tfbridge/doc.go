// Package tfbridge runs a Terraform provider written against
// terraform-plugin-go's tfprotov6.ProviderServer (terraform-plugin-framework
// providers, through providerserver.NewProtocol6) as a cairn provider
// component: it implements cairn's provider world (wit/provider.wit) on
// top of the server, converting schemas, values (msgpack DynamicValues to
// cairn values and back), attribute paths and diagnostics, and calling the
// server in-process. No gRPC server and no go-plugin handshake run: the
// server's RPC methods are plain Go calls.
//
// A provider author adds one file beside the provider's native main:
//
//	//go:build wasip1
//
//	package main
//
//	import (
//		"cairn.dev/tfbridge"
//		"github.com/hashicorp/terraform-plugin-framework/providerserver"
//	)
//
//	func init() { tfbridge.Serve(providerserver.NewProtocol6(New("dev")())) }
//
//	func main() {}
//
// and builds it with `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`
// and `cairn providers componentize` (docs/terraform-providers.md).
//
// Ephemeral resources (Terraform 1.10) are offered through the optional
// `ephemeral-resources` export (ephemeral.go). What the protocol has and
// cairn's WIT does not (provider-defined functions, resource identity,
// deferred actions, list resources, actions, state stores) is not offered
// to cairn; a response that needs it (a Deferred plan or open) fails with
// a diagnostic that says so.
package tfbridge
