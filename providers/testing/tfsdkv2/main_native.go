//go:build !wasip1

package main

import (
	"github.com/hashicorp/terraform-plugin-sdk/v2/plugin"
)

// main serves the provider to Terraform as a gRPC plugin: the same code
// cairn runs as a component (main_wasip1.go).
func main() {
	plugin.Serve(&plugin.ServeOpts{ProviderFunc: Provider})
}
