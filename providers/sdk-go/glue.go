package cairn

// The exported WIT interface for any Provider: decode the request, call the
// provider, encode the answer, and turn errors and panics into diagnostics.

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	witTypes "cairn.dev/sdk-go/internal/gopkg/wit/types"
	"cairn.dev/sdk-go/internal/wit/exports/export_cairn_provider_ephemeral_resources"
	"cairn.dev/sdk-go/internal/wit/exports/export_cairn_provider_provider"
	"cairn.dev/sdk-go/internal/wit/exports/export_cairn_provider_state_moves"
	abi "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_provider"
	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// Export makes p the component's provider. Call it once, from an init
// function of package main (a Go component's main is never called):
//
//	func init() { cairn.Export(&myProvider{}) }
//
// A schema with mistakes (see ProviderSchema.Check) is reported on every
// call, so that `cairn providers check` shows them.
func Export(p Provider) {
	g := newGlue(p)
	export_cairn_provider_provider.Handler = g
	export_cairn_provider_state_moves.Handler = moveGlue{g}
	export_cairn_provider_ephemeral_resources.Handler = ephemeralGlue{g}
}

// glue serves the generated exports for one Provider.
type glue struct {
	provider   Provider
	schema     *ProviderSchema
	schemaErrs []string
	configured bool
}

func newGlue(p Provider) *glue {
	g := &glue{provider: p, schema: p.Schema()}
	if g.schema == nil {
		g.schema = &ProviderSchema{}
		g.schemaErrs = []string{"Schema() returned nil"}
	} else {
		g.schemaErrs = append(g.schema.Check(), checkEphemeralHook(p, g.schema)...)
	}
	return g
}

// recovered turns a panic into an error diagnostic that says where: the
// user will paste it into an issue. Deferred by every export.
func recovered(diags *Diagnostics) {
	r := recover()
	if r == nil {
		return
	}
	stack := panicStack(debug.Stack())
	// Also on standard error, which the host shows with the failure.
	fmt.Fprintf(os.Stderr, "cairn provider panicked: %v\n%s", r, stack)
	*diags = append(*diags, &Diagnostic{
		Severity: SeverityError,
		Summary:  fmt.Sprintf("Provider bug: panic: %v", r),
		Detail:   stack,
	})
}

// panicStack is the stack from the frame that panicked down: the frames
// of the recovery itself (debug.Stack, recovered, panic) say nothing.
func panicStack(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, line := range lines {
		// A frame is a function line and a file line; the panicking
		// frame follows panic's.
		if strings.HasPrefix(line, "panic(") && i+2 < len(lines) {
			return strings.Join(lines[i+2:], "\n")
		}
	}
	return string(stack)
}

// ready is an error when the provider cannot serve calls: a broken schema,
// or no configure yet.
func (g *glue) ready() error {
	if len(g.schemaErrs) > 0 {
		return Errorf("Provider bug: invalid provider schema").WithDetail("%s", strings.Join(g.schemaErrs, "\n"))
	}
	if !g.configured {
		return Errorf("Provider not configured").WithDetail("The host called the provider before `configure`.")
	}
	return nil
}

func (g *glue) resourceSchema(typeName string) (*Schema, error) {
	if err := g.ready(); err != nil {
		return nil, err
	}
	s, ok := g.schema.Resources[typeName]
	if !ok {
		return nil, Errorf("Unknown resource type `%s`", typeName)
	}
	return &s, nil
}

// objectIn decodes a state or configuration from the host: nil or an Object.
func objectIn(v wire.Value, what string) (Object, error) {
	decoded, err := decodeValue(v)
	if err != nil {
		return nil, Errorf("Malformed %s from the host", what).WithDetail("%v", err)
	}
	if decoded == nil {
		return nil, nil
	}
	obj, ok := decoded.(Object)
	if !ok {
		return nil, Errorf("Malformed %s from the host", what).WithDetail("expected an object, got a %s", describe(decoded))
	}
	return obj, nil
}

// objectOut encodes a state for the host, marking the schema's sensitive
// top-level attributes and the extra ones named.
func objectOut(o Object, s *Schema, extra []string) (wire.Value, error) {
	if o == nil {
		return wire.Value{}, nil
	}
	sensitive := s.sensitiveNames()
	for _, n := range extra {
		sensitive[n] = true
	}
	v, err := encodeValue(o, sensitive)
	if err != nil {
		return v, Errorf("Provider bug: a value cannot be sent to the host").WithDetail("%v", err)
	}
	return v, nil
}

// checkKnown is an error diagnostic for a state with an unknown value.
func checkKnown(state Object) *Diagnostic {
	if p, found := FindUnknown(state); found {
		return Errorf("Provider bug: the new state has an unknown value").
			WithDetail("Apply must set every attribute to a known value; %s is unknown.", p).At(stepsOf(p)...)
	}
	return nil
}

func (g *glue) Schema() wire.ProviderSchema {
	return encodeProviderSchema(g.schema)
}

func (g *glue) Configure(config wire.Value) (out []wire.Diagnostic) {
	var diags Diagnostics
	defer func() { out = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	if len(g.schemaErrs) > 0 {
		diags = diagnosticsOf(g.ready())
		return
	}
	// Paths written `./out/x` resolve against the working directory; at
	// "/" they reach a grant of `./out` like `out/x`.
	_ = os.Chdir("/")
	obj, err := objectIn(config, "provider configuration")
	if err == nil {
		err = g.provider.Configure(obj)
	}
	diags = diagnosticsOf(err)
	g.configured = !diags.HasErrors()
	return
}

func (g *glue) ValidateResource(typeName string, config wire.Value) (out []wire.Diagnostic) {
	var diags Diagnostics
	defer func() { out = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	if _, err := g.resourceSchema(typeName); err != nil {
		diags = diagnosticsOf(err)
		return
	}
	obj, err := objectIn(config, "configuration")
	if err == nil {
		err = g.provider.Validate(typeName, obj)
	}
	diags = diagnosticsOf(err)
	return
}

func (g *glue) PlanResource(request abi.PlanRequest) (out abi.PlanResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	s, err := g.resourceSchema(request.TypeName)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	req := &PlanRequest{TypeName: request.TypeName, Schema: s, PriorPrivate: request.PriorPrivate}
	if req.PriorState, err = objectIn(request.PriorState, "prior state"); err == nil {
		if req.ProposedNewState, err = objectIn(request.ProposedNewState, "proposed new state"); err == nil {
			req.Config, err = objectIn(request.Config, "configuration")
		}
	}
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := g.provider.Plan(req)
	if err == nil && resp == nil {
		err = Errorf("Provider bug: Plan returned no response and no error")
	}
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	planned, err := objectOut(resp.PlannedState, s, resp.Sensitive)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	out.PlannedState = planned
	out.PlannedPrivate = resp.PlannedPrivate
	for _, p := range resp.RequiresReplace {
		out.RequiresReplace = append(out.RequiresReplace, encodePath(p))
	}
	diags = resp.Diagnostics
	return
}

func (g *glue) ApplyResource(request abi.ApplyRequest) (out abi.ApplyResponse) {
	// On failure the object is as it was: the prior state (null for a
	// create, so nothing is recorded).
	out.NewState = request.PriorState
	out.Private = request.PlannedPrivate
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	s, err := g.resourceSchema(request.TypeName)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	req := &ApplyRequest{TypeName: request.TypeName, Schema: s, PlannedPrivate: request.PlannedPrivate, IdempotencyKey: request.IdempotencyKey}
	if req.PriorState, err = objectIn(request.PriorState, "prior state"); err == nil {
		if req.PlannedState, err = objectIn(request.PlannedState, "planned state"); err == nil {
			req.Config, err = objectIn(request.Config, "configuration")
		}
	}
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := g.provider.Apply(req)
	if err != nil {
		diags = diagnosticsOf(err)
		// A response with an error: a partly made object, kept tainted.
		if resp == nil || resp.NewState == nil {
			return
		}
	}
	if resp == nil {
		diags = Diagnostics{Errorf("Provider bug: Apply returned no response and no error")}
		return
	}
	diags = append(diags, resp.Diagnostics...)
	if d := checkKnown(resp.NewState); d != nil {
		diags = append(diags, d)
		return
	}
	state, err := objectOut(resp.NewState, s, resp.Sensitive)
	if err != nil {
		diags = append(diags, diagnosticsOf(err)...)
		return
	}
	out.NewState = state
	out.Private = resp.Private
	return
}

func (g *glue) ReadResource(request abi.ReadRequest) (out abi.ReadResponse) {
	// On failure keep what the host has: an error is not "gone".
	out.NewState = witTypes.Some(request.CurrentState)
	out.Private = request.Private
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	s, err := g.resourceSchema(request.TypeName)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	current, err := objectIn(request.CurrentState, "current state")
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := g.read(&ReadRequest{TypeName: request.TypeName, Schema: s, CurrentState: current, Private: request.Private})
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	diags = resp.Diagnostics
	if diags.HasErrors() {
		return
	}
	out.Private = resp.Private
	state := resp.NewState
	if state == nil {
		out.NewState = witTypes.None[wire.Value]()
		return
	}
	v, err := objectOut(state, s, nil)
	if err != nil {
		diags = append(diags, diagnosticsOf(err)...)
		return
	}
	out.NewState = witTypes.Some(v)
	return
}

// read refreshes through ReadResource when the provider has it, else
// through Read (which keeps the private bytes as they were).
func (g *glue) read(req *ReadRequest) (*ReadResponse, error) {
	if r, ok := g.provider.(ResourceReader); ok {
		resp, err := r.ReadResource(req)
		if err == nil && resp == nil {
			err = Errorf("Provider bug: ReadResource returned no response and no error")
		}
		return resp, err
	}
	state, err := g.provider.Read(req)
	return &ReadResponse{NewState: state, Private: req.Private}, err
}

func (g *glue) ImportResource(typeName string, id string) (out abi.ImportResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	if _, err := g.resourceSchema(typeName); err != nil {
		diags = diagnosticsOf(err)
		return
	}
	resp, err := g.importResources(typeName, id)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	diags = resp.Diagnostics
	if diags.HasErrors() {
		return
	}
	for _, found := range resp.Imported {
		if found.State == nil {
			continue
		}
		if d := checkKnown(found.State); d != nil {
			diags = append(diags, d)
			return
		}
		schema, err := g.resourceSchema(found.TypeName)
		if err != nil {
			diags = append(diags, diagnosticsOf(err)...)
			return
		}
		v, err := objectOut(found.State, schema, nil)
		if err != nil {
			diags = append(diags, diagnosticsOf(err)...)
			return
		}
		out.Imported = append(out.Imported, abi.ImportedResource{TypeName: found.TypeName, State: v, Private: found.Private})
	}
	if len(out.Imported) == 0 {
		diags = append(diags, Errorf("No `%s` with the id %q", typeName, id))
	}
	return
}

// importResources imports through ImportResources when the provider has
// it, else through Import.
func (g *glue) importResources(typeName, id string) (*ImportResponse, error) {
	if r, ok := g.provider.(ResourceImporter); ok {
		resp, err := r.ImportResources(typeName, id)
		if err == nil && resp == nil {
			err = Errorf("Provider bug: ImportResources returned no response and no error")
		}
		return resp, err
	}
	state, err := g.provider.Import(typeName, id)
	return &ImportResponse{Imported: []ImportedResource{{TypeName: typeName, State: state}}}, err
}

func (g *glue) ReadDataSource(typeName string, config wire.Value) (out abi.DataResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	if err := g.ready(); err != nil {
		diags = diagnosticsOf(err)
		return
	}
	s, ok := g.schema.DataSources[typeName]
	if !ok {
		diags = Diagnostics{Errorf("Unknown data source `%s`", typeName)}
		return
	}
	obj, err := objectIn(config, "configuration")
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	state, err := g.provider.ReadDataSource(typeName, obj)
	diags = diagnosticsOf(err)
	if diags.HasErrors() || (err != nil && state == nil) {
		return
	}
	if d := checkKnown(state); d != nil {
		diags = append(diags, d)
		return
	}
	v, err := objectOut(state, &s, nil)
	if err != nil {
		diags = append(diags, diagnosticsOf(err)...)
		return
	}
	out.State = v
	return
}

func (g *glue) UpgradeState(typeName string, version uint64, rawState string) (out abi.UpgradeResponse) {
	var diags Diagnostics
	defer func() { out.Diagnostics = encodeDiagnostics(diags) }()
	defer recovered(&diags)
	s, err := g.resourceSchema(typeName)
	if err != nil {
		diags = diagnosticsOf(err)
		return
	}
	state, err := g.provider.UpgradeState(typeName, version, rawState)
	if errors.Is(err, errDefaultUpgrade) {
		state, err = defaultUpgrade(s, typeName, version, rawState)
	}
	diags = diagnosticsOf(err)
	if diags.HasErrors() || (err != nil && state == nil) {
		return
	}
	v, err := objectOut(state, s, nil)
	if err != nil {
		diags = append(diags, diagnosticsOf(err)...)
		return
	}
	out.UpgradedState = v
	return
}

// defaultUpgrade reads a state of the current schema version and refuses
// any other: a provider that bumps a version must implement UpgradeState.
func defaultUpgrade(s *Schema, typeName string, version uint64, rawState string) (Object, error) {
	if version != s.Version {
		return nil, Errorf("Cannot upgrade `%s` state from version %d", typeName, version).
			WithDetail("The provider's schema is at version %d, and it has no upgrade from version %d.", s.Version, version)
	}
	return StateFromJSON(s, rawState)
}
