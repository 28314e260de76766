package tfbridge

// terraform-plugin-sdk/v2 providers (and any other tfprotov5 server):
// protocol 5 is upgraded to protocol 6 by terraform-plugin-mux's
// tf5to6server, HashiCorp's own adapter for exactly this, so that one
// bridge serves both protocols; their legacy type system answers are then
// normalised as Terraform's shims would read them (legacy.go).

import (
	"context"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-mux/tf5to6server"
)

// ServeV5 makes the protocol 5 server that newServer returns the
// component's provider. Call it once, from an init function of package
// main. An SDKv2 provider calls sdkv2.Serve (cairn.dev/tfbridge/sdkv2)
// instead, which also tells the bridge the attributes with defaults.
func ServeV5(newServer func() tfprotov5.ProviderServer) {
	ServeV5WithDefaults(newServer, nil)
}

// ServeV5WithDefaults is ServeV5 for a legacy provider whose attributes
// at defaults are filled in by the provider when the configuration leaves
// them null (see Defaults).
func ServeV5WithDefaults(newServer func() tfprotov5.ProviderServer, defaults Defaults) {
	cairn.Export(New(UpgradeV5(newServer, defaults)))
}

// UpgradeV5 is the protocol 5 server as a protocol 6 one whose legacy type
// system answers are normalised (legacy.go). tf5to6server fails only for a
// nil server, a bug in the provider's main: it panics with why, which the
// host reports as the provider failing to start.
func UpgradeV5(newServer func() tfprotov5.ProviderServer, defaults Defaults) tfprotov6.ProviderServer {
	upgraded, err := tf5to6server.UpgradeServer(context.Background(), newServer)
	if err != nil {
		panic("tfbridge: the protocol 5 server cannot be upgraded to protocol 6: " + err.Error())
	}
	return normaliseLegacy(upgraded, defaults)
}
