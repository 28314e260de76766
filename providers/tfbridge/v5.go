package tfbridge

// terraform-plugin-sdk/v2 providers (and any other tfprotov5 server):
// protocol 5 is upgraded to protocol 6 by terraform-plugin-mux's
// tf5to6server, HashiCorp's own adapter for exactly this, so that one
// bridge serves both protocols; their legacy type system answers are then
// normalised as Terraform's shims do (legacy.go).

import (
	"context"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-mux/tf5to6server"
)

// ServeV5 makes the protocol 5 server that newServer returns the
// component's provider: what an SDKv2 provider's main calls, with its
// schema.Provider's GRPCProvider. Call it once, from an init function of
// package main:
//
//	func init() { tfbridge.ServeV5(provider.New().GRPCProvider) }
func ServeV5(newServer func() tfprotov5.ProviderServer) {
	cairn.Export(NewV5(newServer))
}

// NewV5 bridges a protocol 5 server, as New does a protocol 6 one.
func NewV5(newServer func() tfprotov5.ProviderServer) *Provider {
	return New(UpgradeV5(newServer))
}

// UpgradeV5 is the protocol 5 server as a protocol 6 one whose legacy type
// system answers are normalised (legacy.go). tf5to6server fails only for a
// nil server, which is a bug in the provider's main: it panics with why.
func UpgradeV5(newServer func() tfprotov5.ProviderServer) tfprotov6.ProviderServer {
	upgraded, err := tf5to6server.UpgradeServer(context.Background(), newServer)
	if err != nil {
		panic("tfbridge.ServeV5: the protocol 5 server cannot be upgraded to protocol 6: " + err.Error())
	}
	return normaliseLegacy(upgraded)
}
