package cairn

// Provider is a cairn provider. Embed Base for the methods you do not
// need, implement the rest, and hand a value to Export in an init function:
//
//	type hello struct{ cairn.Base }
//
//	func (*hello) Schema() *cairn.ProviderSchema { … }
//	func (*hello) Configure(config cairn.Object) error { return nil }
//	func (*hello) Apply(req *cairn.ApplyRequest) (*cairn.ApplyResponse, error) { … }
//
//	func init() { cairn.Export(&hello{}) }
//	func main() {}
//
// The host may make a fresh instance for any call: it calls Configure first
// on each, and the provider value lives as long as the instance. Keep
// nothing else between calls.
//
// Every method reports failure by returning an error: a *Diagnostic or
// Diagnostics (built with Errorf and Warningf, with attribute paths), or
// any other error, which becomes one error diagnostic with its message. A
// panic is recovered and reported as a provider bug, with its stack, on the
// resource whose call panicked; the instance is then thrown away.
type Provider interface {
	// Schema is everything the provider offers. Called before Configure;
	// must not depend on configuration.
	Schema() *ProviderSchema

	// Configure takes the `provider "name" { … }` block (nil when there is
	// none).
	Configure(config Object) error

	// Validate checks a resource's configuration beyond what the schema
	// says (the host has checked types and required attributes). Values
	// may be Unknown: say nothing about those. Return Diagnostics of
	// warnings only to warn without failing.
	Validate(typeName string, config Object) error

	// Plan predicts a create or an update (the host plans deletes). Base's
	// Plan is PlanFromProposed, which honours the schema's RequiresReplace
	// and Default.
	Plan(req *PlanRequest) (*PlanResponse, error)

	// Apply makes the object match req.PlannedState: creates it
	// (PriorState nil), updates it, or deletes it (PlannedState nil). The
	// new state must keep every known planned value and hold no Unknown.
	// To report a partly created object, return a response with the partial
	// state and an error in its Diagnostics: the host records it as
	// tainted. An error from a create records nothing.
	Apply(req *ApplyRequest) (*ApplyResponse, error)

	// Read refreshes: the object as it really is now, or nil when it no
	// longer exists (an answer, not an error). Base's Read trusts the
	// stored state.
	Read(req *ReadRequest) (Object, error)

	// Import finds an existing object by its provider-specific id and
	// returns its state, for adoption. Base's Import says the type does not
	// support import.
	Import(typeName, id string) (Object, error)

	// ReadDataSource reads a data source with a fully known configuration:
	// the configuration with every computed attribute filled in. A
	// Diagnostics of warnings only, returned with a state, is reported
	// with it (as for UpgradeState).
	ReadDataSource(typeName string, config Object) (Object, error)

	// UpgradeState rewrites a state stored with schema version `version`
	// (as JSON) into the current layout. Base's reads the current version
	// with StateFromJSON and refuses any other.
	UpgradeState(typeName string, version uint64, rawJSON string) (Object, error)
}

// Base gives a Provider the default methods; embed it and override what
// you need.
type Base struct{}

// Validate accepts every configuration.
func (Base) Validate(typeName string, config Object) error { return nil }

// Plan is PlanFromProposed.
func (Base) Plan(req *PlanRequest) (*PlanResponse, error) { return PlanFromProposed(req), nil }

// Read trusts the stored state.
func (Base) Read(req *ReadRequest) (Object, error) { return req.CurrentState, nil }

// Import is unsupported.
func (Base) Import(typeName, id string) (Object, error) {
	return nil, Errorf("Resource type `%s` does not support import", typeName)
}

// ReadDataSource knows no data source.
func (Base) ReadDataSource(typeName string, config Object) (Object, error) {
	return nil, Errorf("Unknown data source `%s`", typeName)
}

// UpgradeState reads a state of the current schema version (see Provider).
func (Base) UpgradeState(typeName string, version uint64, rawJSON string) (Object, error) {
	return nil, errDefaultUpgrade
}

// PlanRequest is what Plan is given: the lifecycle's artifacts for one
// resource instance.
type PlanRequest struct {
	// TypeName is the resource type name.
	TypeName string
	// Schema is the resource type's schema.
	Schema *Schema
	// PriorState is the state after the last apply (after refresh); nil for
	// a create.
	PriorState Object
	// ProposedNewState is the host's merge: configured values where the
	// configuration sets them, prior values for computed attributes it
	// leaves null.
	ProposedNewState Object
	// Config is the configuration alone; may hold Unknown values.
	Config Object
	// PriorPrivate is the private bytes stored with the prior state.
	PriorPrivate []byte
}

// IsCreate reports whether this is the plan of a new object.
func (r *PlanRequest) IsCreate() bool { return r.PriorState == nil }

// ProposedRequest is the request the host sends for config over prior (nil
// for a create): the proposed new state takes the configured values, and
// the prior value of each computed top-level attribute the configuration
// leaves null. For a provider's unit tests.
func ProposedRequest(typeName string, schema *Schema, prior, config Object) *PlanRequest {
	proposed := config.Clone()
	for _, name := range schema.computedNames() {
		if config.IsNull(name) {
			proposed[name] = Clone(prior[name])
		}
	}
	return &PlanRequest{TypeName: typeName, Schema: schema, PriorState: prior, ProposedNewState: proposed, Config: config}
}

// PlanResponse is what Plan answers. Start from PlanFromProposed and chain
// the helpers, or set the fields directly.
type PlanResponse struct {
	// PlannedState is the predicted new state. It must keep every non-null
	// configured value (or the prior one); it may set computed attributes
	// the configuration leaves null, using Unknown{} for what only apply
	// can tell.
	PlannedState Object
	// RequiresReplace are attributes whose change cannot be made in place:
	// if any differs from the prior state, the host replaces the object.
	RequiresReplace []Path
	// PlannedPrivate is opaque bytes handed back to Apply.
	PlannedPrivate []byte
	// Diagnostics are warnings to show (errors belong in Plan's error).
	Diagnostics Diagnostics
	// Sensitive are top-level attributes to mark sensitive in the planned
	// state beyond those the schema marks.
	Sensitive []string

	// What the helpers need to know of the request (nil when the response
	// was not made by PlanFromProposed).
	prior, config Object
	// Top-level computed attributes the configuration leaves null: the
	// ones a plan may set freely, and that a replacement makes unknown.
	free []string
	// Whether a replacement has already made them unknown.
	replacing bool
}

// NewPlanResponse plans exactly planned, no replacement.
func NewPlanResponse(planned Object) *PlanResponse {
	return &PlanResponse{PlannedState: planned}
}

// PlanFromProposed is the default plan: the proposed new state with
// write-only attributes null; on create every top-level computed attribute
// the configuration leaves null becomes unknown (on update they keep their
// prior values, which the host merged in). Then the schema's Default
// values fill in unset attributes, and its RequiresReplace attributes are
// declared (see RequiresReplace). The prior private bytes are carried over.
func PlanFromProposed(req *PlanRequest) *PlanResponse {
	var free []string
	for _, name := range req.Schema.computedNames() {
		if req.Config.IsNull(name) {
			free = append(free, name)
		}
	}
	planned, _ := req.Schema.Block.nullWriteOnly(req.ProposedNewState.Clone()).(Object)
	if planned == nil {
		planned = Object{}
	}
	resp := &PlanResponse{
		PlannedState:   planned,
		PlannedPrivate: req.PriorPrivate,
		prior:          req.PriorState,
		config:         req.Config,
		free:           free,
	}
	if req.IsCreate() {
		resp.markFreeUnknown()
	}
	var replacing []string
	for _, name := range sortedKeys(req.Schema.Attributes) {
		a := req.Schema.Attributes[name]
		if a.Default != nil {
			resp.Default(name, a.Default)
		}
		if a.RequiresReplace {
			replacing = append(replacing, name)
		}
	}
	if len(replacing) > 0 {
		resp.RequiresReplaceAttrs(replacing...)
	}
	return resp
}

func (r *PlanResponse) markFreeUnknown() {
	for _, name := range r.free {
		r.PlannedState[name] = Unknown{}
	}
}

// RequiresReplaceAttrs declares top-level attributes whose change forces a
// replacement. When one of them differs from the prior state (or is
// unknown), the object will be made anew, so the computed attributes the
// configuration leaves null become unknown, as on create: the prior
// object's values do not describe the new one.
func (r *PlanResponse) RequiresReplaceAttrs(names ...string) *PlanResponse {
	for _, name := range names {
		r.RequiresReplacePath(At(name))
	}
	return r
}

// RequiresReplacePath declares an attribute path (nested ones too) whose
// change forces a replacement, with the same effect on computed attributes
// as RequiresReplaceAttrs.
func (r *PlanResponse) RequiresReplacePath(path Path) *PlanResponse {
	r.RequiresReplace = append(r.RequiresReplace, path)
	if r.prior != nil && !Equal(valueAt(r.prior, path), valueAt(r.PlannedState, path)) {
		r.replace()
	}
	return r
}

func (r *PlanResponse) replace() {
	if r.replacing {
		return
	}
	r.replacing = true
	r.markFreeUnknown()
	// Marked once: a later call must not blank out values set in between.
	r.free = nil
}

// Default uses value for the Optional+Computed attribute name when the
// configuration leaves it null (Terraform's `Default`). Call it before
// RequiresReplaceAttrs when name is one of the replacing attributes, so
// that the comparison sees the default (PlanFromProposed does).
func (r *PlanResponse) Default(name string, value any) *PlanResponse {
	if r.config.IsNull(name) {
		r.PlannedState[name] = value
		r.keep(name)
	}
	return r
}

// Set sets the planned value of the top-level attribute name (a computed
// attribute the provider can predict, or Unknown{}); a later replacement
// does not blank it out.
func (r *PlanResponse) Set(name string, value any) *PlanResponse {
	r.PlannedState[name] = value
	r.keep(name)
	return r
}

func (r *PlanResponse) keep(name string) {
	for i, n := range r.free {
		if n == name {
			r.free = append(r.free[:i:i], r.free[i+1:]...)
			return
		}
	}
}

// MarkSensitive marks the top-level attribute name of the planned state
// sensitive (a value the schema cannot know is secret).
func (r *PlanResponse) MarkSensitive(name string) *PlanResponse {
	r.Sensitive = append(r.Sensitive, name)
	return r
}

// Warn adds a warning for the user.
func (r *PlanResponse) Warn(d *Diagnostic) *PlanResponse {
	r.Diagnostics = append(r.Diagnostics, d)
	return r
}

// IsReplacing reports whether a RequiresReplace attribute differs from the
// prior state: the host will replace the object.
func (r *PlanResponse) IsReplacing() bool { return r.replacing }

// valueAt is the value at path inside v (nil where the path leads nowhere).
func valueAt(v any, path Path) any {
	for _, step := range path {
		switch x := Unwrap(v).(type) {
		case Object:
			v = x[step.Attribute]
		case map[string]any:
			v = x[step.Attribute]
		case Map:
			v = x[step.Key]
		case []any:
			v = elementAt(x, step)
		case Tuple:
			v = elementAt(x, step)
		case Set:
			v = elementAt(x, step)
		case Unknown:
			// Inside an unknown everything is unknown.
			return x
		default:
			return nil
		}
	}
	return v
}

func elementAt(xs []any, step PathStep) any {
	if !step.IsIndex || step.Index >= uint64(len(xs)) {
		return nil
	}
	return xs[step.Index]
}

// ApplyRequest is what Apply is given.
type ApplyRequest struct {
	// TypeName is the resource type name.
	TypeName string
	// Schema is the resource type's schema.
	Schema *Schema
	// PriorState is the state before this change; nil for a create.
	PriorState Object
	// PlannedState is the planned state; nil means delete the object.
	PlannedState Object
	// Config is the configuration, fully known; nil for a delete. Write-only
	// attributes have their values here (the planned state holds null).
	Config Object
	// PlannedPrivate is the PlannedPrivate bytes of the plan.
	PlannedPrivate []byte
	// IdempotencyKey is the same for every retry of the same planned
	// change, so that an object an interrupted attempt created can be
	// recognised, and different for every other change.
	IdempotencyKey string
}

// IsCreate reports whether this is the creation of a new object.
func (r *ApplyRequest) IsCreate() bool { return r.PriorState == nil && r.PlannedState != nil }

// IsDelete reports whether this is the deletion of the object.
func (r *ApplyRequest) IsDelete() bool { return r.PlannedState == nil }

// PlannedOr returns the planned value of attribute name when the plan
// knows it, else compute(): the usual way to fill in a computed attribute
// without changing a value the plan promised.
func (r *ApplyRequest) PlannedOr(name string, compute func() any) any {
	// A planned null is known too: the plan promised it.
	if v, ok := r.PlannedState[name]; ok && IsKnown(v) {
		return v
	}
	return compute()
}

// ApplyResponse is what Apply answers.
type ApplyResponse struct {
	// NewState is the object as it now is: every value known, every known
	// planned value kept; nil after a delete.
	NewState Object
	// Private is opaque bytes the host stores with the state.
	Private []byte
	// Diagnostics are warnings; or an error together with a partial
	// NewState.
	Diagnostics Diagnostics
	// Sensitive are top-level attributes to mark sensitive in the new
	// state beyond those the schema marks.
	Sensitive []string
}

// Applied is the response for an object that now has state newState.
func Applied(newState Object) *ApplyResponse { return &ApplyResponse{NewState: newState} }

// Deleted is the response for a deleted object.
func Deleted() *ApplyResponse { return &ApplyResponse{} }

// ReadRequest is what Read is given: the state as the host has it.
type ReadRequest struct {
	TypeName     string
	Schema       *Schema
	CurrentState Object
	Private      []byte
}

// ReadResponse is what a ResourceReader answers for a refresh.
type ReadResponse struct {
	// NewState is the object as it now is; nil when it no longer exists.
	NewState Object
	// Private is stored with the state in place of the request's.
	Private []byte
	// Diagnostics are reported with the state (warnings) or instead of it
	// (errors: the host keeps what it had).
	Diagnostics Diagnostics
}

// ResourceReader is a Provider whose refresh also rewrites the private
// bytes stored with the state, or warns while it succeeds. The glue calls
// ReadResource instead of Read when the Provider has it. The Terraform
// bridge (providers/tfbridge) uses it: a tfprotov6 ReadResource answers
// private data and diagnostics beside the state.
type ResourceReader interface {
	ReadResource(req *ReadRequest) (*ReadResponse, error)
}

// ImportedResource is one object an import found.
type ImportedResource struct {
	TypeName string
	State    Object
	Private  []byte
}

// ImportResponse is what a ResourceImporter answers.
type ImportResponse struct {
	Imported    []ImportedResource
	Diagnostics Diagnostics
}

// ResourceImporter is a Provider whose import answers private bytes, more
// than one object, or warnings. The glue calls ImportResources instead of
// Import when the Provider has it (the Terraform bridge does).
type ResourceImporter interface {
	ImportResources(typeName, id string) (*ImportResponse, error)
}
