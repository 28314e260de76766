//go:build wasip1

// The provider as a cairn component: the bridge serves the framework
// provider's tfprotov6 server in-process. Built with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared (see
// docs/terraform-providers.md).
package main

import (
	"cairn.dev/tfbridge"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	// net/http through the host's wasi:http (the sandbox's http grant).
	_ "cairn.dev/sdk-go/cairnhttp"
)

func init() { tfbridge.Serve(providerserver.NewProtocol6(New("0.1.0")())) }

// main is never called in a component.
func main() {}
