//go:build !wasip1

// The provider as a Terraform plugin: the same code, served over gRPC.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), New("0.1.0"), providerserver.ServeOpts{
		Address: "registry.terraform.io/cairn/tfhttp",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
