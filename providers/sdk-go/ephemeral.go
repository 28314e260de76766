package cairn

// Ephemeral resources: the optional `ephemeral-resources` export
// (wit/provider.wit), which every Go component exports because a Go
// component's exports are fixed when it is built. A provider without
// ephemeral resource types answers `schemas` with none, and the host
// refuses an `ephemeral` block of its types as unknown.

import (
	"strings"
	"time"

	witTypes "cairn.dev/sdk-go/internal/gopkg/wit/types"
	eph "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_ephemeral_resources"
	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// EphemeralResourcer is an optional Provider hook: the ephemeral resource
// types declared in ProviderSchema.EphemeralResources (Terraform 1.10's
//
//	ephemeral "mycloud_token" "ci" {
//	  scope = "deploy"
//	}
//
// whose values flow only into write-only attributes, provider
// configurations and other ephemeral places, and are never stored). The
// host opens an object when a plan or an apply needs its values, renews it
// at the time Open (or the last Renew) asked for while the run still uses
// it, and closes it once the run no longer does, also when the run fails.
//
// Errors are returned as for the other calls: a *Diagnostic, Diagnostics
// (which may hold warnings only) or any error.
type EphemeralResourcer interface {
	// ValidateEphemeral checks a configuration beyond what the schema
	// says. Values may be Unknown: do not report errors about those.
	ValidateEphemeral(typeName string, config Object) error
	// OpenEphemeral opens one object of a fully known configuration.
	OpenEphemeral(req *OpenEphemeralRequest) (*OpenEphemeralResponse, error)
	// RenewEphemeral keeps an open object alive (extends a lease,
	// refreshes a token).
	RenewEphemeral(req *RenewEphemeralRequest) (*RenewEphemeralResponse, error)
	// CloseEphemeral closes an open object (revokes a lease, ends a
	// session). Called once for every successful OpenEphemeral; an error
	// fails the run.
	CloseEphemeral(req *CloseEphemeralRequest) error
}

// OpenEphemeralRequest is what OpenEphemeral is given.
type OpenEphemeralRequest struct {
	TypeName string
	Schema   *Schema
	// Config is the `ephemeral` block's configuration, every value known.
	Config Object
}

// OpenEphemeralResponse is what OpenEphemeral answers.
type OpenEphemeralResponse struct {
	// Result is the configuration with every computed attribute filled
	// in, every value known (the host checks it against the schema).
	Result Object
	// Private is handed to RenewEphemeral and CloseEphemeral of this
	// object (in this run only: it is never stored).
	Private []byte
	// RenewAt is when RenewEphemeral must be called; the zero time for
	// never.
	RenewAt time.Time
	// Diagnostics are warnings to show with the result.
	Diagnostics Diagnostics
}

// RenewEphemeralRequest is what RenewEphemeral is given.
type RenewEphemeralRequest struct {
	TypeName string
	// Private is what OpenEphemeral (or the last RenewEphemeral) answered.
	Private []byte
}

// RenewEphemeralResponse is what RenewEphemeral answers.
type RenewEphemeralResponse struct {
	// Private replaces the object's private bytes.
	Private []byte
	// RenewAt is when to call RenewEphemeral again; the zero time for
	// never.
	RenewAt time.Time
	// Diagnostics are warnings.
	Diagnostics Diagnostics
}

// CloseEphemeralRequest is what CloseEphemeral is given.
type CloseEphemeralRequest struct {
	TypeName string
	// Private is what OpenEphemeral (or the last RenewEphemeral) answered.
	Private []byte
}

// checkEphemeralHook is the schema mistake of a provider that declares
// ephemeral resource types without the hook that serves them.
func checkEphemeralHook(p Provider, ps *ProviderSchema) []string {
	if _, ok := p.(EphemeralResourcer); ok || len(ps.EphemeralResources) == 0 {
		return nil
	}
	names := "`" + strings.Join(sortedKeys(ps.EphemeralResources), "`, `") + "`"
	return []string{"ephemeral resources " + names + " are declared, but the provider does not implement cairn.EphemeralResourcer"}
}

// ephemeralGlue serves the generated `ephemeral-resources` export for one
// Provider.
type ephemeralGlue struct{ g *glue }

func (e ephemeralGlue) Schemas() []witTypes.Tuple2[string, eph.Schema] {
	m := e.g.schema.EphemeralResources
	names := sortedKeys(m)
	out := make([]witTypes.Tuple2[string, eph.Schema], len(names))
	for i, n := range names {
		s := m[n]
		out[i] = witTypes.Tuple2[string, eph.Schema]{F0: n, F1: encodeSchema(&s)}
	}
	return out
}

// ephemeral is the hook and the type's schema, or an error diagnostic.
func (g *glue) ephemeral(typeName string) (EphemeralResourcer, *Schema, error) {
	if err := g.ready(); err != nil {
		return nil, nil, err
	}
	s, ok := g.schema.EphemeralResources[typeName]
	if !ok {
		return nil, nil, Errorf("Unknown ephemeral resource type `%s`", typeName)
	}
	// newGlue refuses declared types without the hook, so this holds.
	hook := g.provider.(EphemeralResourcer)
	return hook, &s, nil
}

func (e ephemeralGlue) Validate(typeName string, config wire.Value) (out []wire.Diagnostic) {
	var diags Diagnostics
	defer func() { out = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	hook, _, err := e.g.ephemeral(typeName)
	if err == nil {
		var obj Object
		if obj, err = objectIn(config, "configuration"); err == nil {
			err = hook.ValidateEphemeral(typeName, obj)
		}
	}
	diags = diagnosticsOf(err)
	return
}

func (e ephemeralGlue) Open(typeName string, config wire.Value) (out eph.OpenResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	hook, s, err := e.g.ephemeral(typeName)
	var obj Object
	if err == nil {
		obj, err = objectIn(config, "configuration")
	}
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := hook.OpenEphemeral(&OpenEphemeralRequest{TypeName: typeName, Schema: s, Config: obj})
	diags = diagnosticsOf(err)
	if diags.HasErrors() {
		return
	}
	if resp == nil || resp.Result == nil {
		diags = append(diags, Errorf("Provider bug: OpenEphemeral returned no result and no error"))
		return
	}
	diags = append(diags, resp.Diagnostics...)
	if d := checkKnown(resp.Result); d != nil {
		diags = append(diags, d)
		return
	}
	result, err := objectOut(resp.Result, s, nil)
	if err != nil {
		diags = append(diags, diagnosticsOf(err)...)
		return
	}
	out.Result = result
	out.Private = resp.Private
	out.RenewAt = renewAt(resp.RenewAt)
	return
}

func (e ephemeralGlue) Renew(typeName string, private []uint8) (out eph.RenewResponse) {
	// On failure the object keeps its private bytes.
	out.Private = private
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	hook, _, err := e.g.ephemeral(typeName)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := hook.RenewEphemeral(&RenewEphemeralRequest{TypeName: typeName, Private: private})
	diags = diagnosticsOf(err)
	if diags.HasErrors() {
		return
	}
	if resp == nil {
		diags = append(diags, Errorf("Provider bug: RenewEphemeral returned no response and no error"))
		return
	}
	diags = append(diags, resp.Diagnostics...)
	out.Private = resp.Private
	out.RenewAt = renewAt(resp.RenewAt)
	return
}

func (e ephemeralGlue) Close(typeName string, private []uint8) (out []wire.Diagnostic) {
	var diags Diagnostics
	defer func() { out = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	hook, _, err := e.g.ephemeral(typeName)
	if err == nil {
		err = hook.CloseEphemeral(&CloseEphemeralRequest{TypeName: typeName, Private: private})
	}
	diags = diagnosticsOf(err)
	return
}

// renewAt is the WIT's renewal time: milliseconds since the Unix epoch, or
// none for the zero time.
func renewAt(t time.Time) witTypes.Option[uint64] {
	if t.IsZero() {
		return witTypes.None[uint64]()
	}
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	return witTypes.Some(uint64(ms))
}
