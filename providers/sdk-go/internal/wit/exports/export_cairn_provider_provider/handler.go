// Package export_cairn_provider_provider holds the functions the generated
// exports (package wit_exports) call for the `cairn:provider/provider`
// interface. Written by hand, not generated: each hands its call to
// Handler, which the SDK's cairn.Export sets. (Kept by
// scripts/regen-go-bindings.sh.)
package export_cairn_provider_provider

import (
	"cairn.dev/sdk-go/internal/wit/imports/cairn_provider_provider"
	"cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// Exports is the provider interface with the generated wire types.
type Exports interface {
	Schema() cairn_provider_types.ProviderSchema
	Configure(config cairn_provider_types.Value) []cairn_provider_types.Diagnostic
	ValidateResource(typeName string, config cairn_provider_types.Value) []cairn_provider_types.Diagnostic
	PlanResource(request cairn_provider_provider.PlanRequest) cairn_provider_provider.PlanResponse
	ApplyResource(request cairn_provider_provider.ApplyRequest) cairn_provider_provider.ApplyResponse
	ReadResource(request cairn_provider_provider.ReadRequest) cairn_provider_provider.ReadResponse
	ImportResource(typeName string, id string) cairn_provider_provider.ImportResponse
	ReadDataSource(typeName string, config cairn_provider_types.Value) cairn_provider_provider.DataResponse
	UpgradeState(typeName string, version uint64, rawState string) cairn_provider_provider.UpgradeResponse
}

// Handler serves every call; set by cairn.Export.
var Handler Exports

func handler() Exports {
	if Handler == nil {
		panic("cairn: this component exports no provider: call cairn.Export(yourProvider) in an init function of package main")
	}
	return Handler
}

func Schema() cairn_provider_types.ProviderSchema { return handler().Schema() }

func Configure(config cairn_provider_types.Value) []cairn_provider_types.Diagnostic {
	return handler().Configure(config)
}

func ValidateResource(typeName string, config cairn_provider_types.Value) []cairn_provider_types.Diagnostic {
	return handler().ValidateResource(typeName, config)
}

func PlanResource(request cairn_provider_provider.PlanRequest) cairn_provider_provider.PlanResponse {
	return handler().PlanResource(request)
}

func ApplyResource(request cairn_provider_provider.ApplyRequest) cairn_provider_provider.ApplyResponse {
	return handler().ApplyResource(request)
}

func ReadResource(request cairn_provider_provider.ReadRequest) cairn_provider_provider.ReadResponse {
	return handler().ReadResource(request)
}

func ImportResource(typeName string, id string) cairn_provider_provider.ImportResponse {
	return handler().ImportResource(typeName, id)
}

func ReadDataSource(typeName string, config cairn_provider_types.Value) cairn_provider_provider.DataResponse {
	return handler().ReadDataSource(typeName, config)
}

func UpgradeState(typeName string, version uint64, rawState string) cairn_provider_provider.UpgradeResponse {
	return handler().UpgradeState(typeName, version, rawState)
}
