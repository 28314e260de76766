// Command tfjson reads a document of Terraform's JSON output format with
// HashiCorp's own reader, github.com/hashicorp/terraform-json, the library
// tools written for Terraform use, and prints the address of every
// resource it finds: cairn's end-to-end tests run it on `cairn show
// -json` to prove those tools can read what cairn writes.
//
// Usage: tfjson state|plan FILE
package main

import (
	"fmt"
	"os"

	tfjson "github.com/hashicorp/terraform-json"
)

func main() {
	if len(os.Args) != 3 {
		fail("usage: tfjson state|plan FILE")
	}
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		fail(err.Error())
	}
	switch os.Args[1] {
	case "state":
		var state tfjson.State
		if err := state.UnmarshalJSON(data); err != nil {
			fail("state: " + err.Error())
		}
		if state.Values == nil {
			fail("state: no values")
		}
		printModule(state.Values.RootModule)
	case "plan":
		var plan tfjson.Plan
		if err := plan.UnmarshalJSON(data); err != nil {
			fail("plan: " + err.Error())
		}
		for _, change := range plan.ResourceChanges {
			fmt.Println(change.Address)
		}
	default:
		fail("the kind is state or plan, not " + os.Args[1])
	}
}

// printModule prints the address of each resource of the module and of
// the modules inside it.
func printModule(module *tfjson.StateModule) {
	if module == nil {
		return
	}
	for _, resource := range module.Resources {
		fmt.Println(resource.Address)
	}
	for _, child := range module.ChildModules {
		printModule(child)
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "tfjson:", message)
	os.Exit(1)
}
