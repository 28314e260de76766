// Package export_cairn_provider_ephemeral_resources holds the functions the
// generated exports (package wit_exports) call for the optional
// `cairn:provider/ephemeral-resources` interface. Written by hand, not
// generated: it hands each call to Handler, which the SDK's cairn.Export
// sets. (Kept by scripts/regen-go-bindings.sh.)
package export_cairn_provider_ephemeral_resources

import (
	witTypes "cairn.dev/sdk-go/internal/gopkg/wit/types"
	"cairn.dev/sdk-go/internal/wit/imports/cairn_provider_ephemeral_resources"
)

// Exports is the ephemeral-resources interface with the generated wire types.
type Exports interface {
	Schemas() []witTypes.Tuple2[string, cairn_provider_ephemeral_resources.Schema]
	Validate(typeName string, config cairn_provider_ephemeral_resources.Value) []cairn_provider_ephemeral_resources.Diagnostic
	Open(typeName string, config cairn_provider_ephemeral_resources.Value) cairn_provider_ephemeral_resources.OpenResponse
	Renew(typeName string, private []uint8) cairn_provider_ephemeral_resources.RenewResponse
	Close(typeName string, private []uint8) []cairn_provider_ephemeral_resources.Diagnostic
}

// Handler serves every call; set by cairn.Export.
var Handler Exports

func handler() Exports {
	if Handler == nil {
		panic("cairn: this component exports no provider: call cairn.Export(yourProvider) in an init function of package main")
	}
	return Handler
}

func Schemas() []witTypes.Tuple2[string, cairn_provider_ephemeral_resources.Schema] {
	return handler().Schemas()
}

func Validate(typeName string, config cairn_provider_ephemeral_resources.Value) []cairn_provider_ephemeral_resources.Diagnostic {
	return handler().Validate(typeName, config)
}

func Open(typeName string, config cairn_provider_ephemeral_resources.Value) cairn_provider_ephemeral_resources.OpenResponse {
	return handler().Open(typeName, config)
}

func Renew(typeName string, private []uint8) cairn_provider_ephemeral_resources.RenewResponse {
	return handler().Renew(typeName, private)
}

func Close(typeName string, private []uint8) []cairn_provider_ephemeral_resources.Diagnostic {
	return handler().Close(typeName, private)
}
