package tfbridge

// The legacy type system: terraform-plugin-sdk/v2 providers declare
// UnsafeToUseLegacyTypeSystem on their plans and applies, and Terraform
// then only logs the contract violations their answers contain. cairn
// exempts no one: the host checks a legacy provider's answers as any
// other's. What SDKv2 gets wrong in a way that has one faithful reading is
// normalised here, before the host sees the answer, as Terraform's own
// legacy shims would read it:
//
//   - An attribute the configuration (or, for an apply, the plan; for a
//     read, the prior state) leaves null, which the provider may not
//     compute, answered with its type's zero value ("", 0, false) or an
//     empty collection: SDKv2 cannot tell null from zero, and its
//     top-level normalisation misses attributes inside nested blocks,
//     above all inside sets of blocks. The answer is made null again.
//   - A list or set of blocks answered null where the reference has an
//     empty one: no blocks is an empty collection, not null.
//   - An attribute with a Default (or DefaultFunc) in the SDKv2 schema is
//     filled in by the provider when the configuration leaves it null,
//     which only a computed attribute may be. Given the attributes that
//     have one (package cairn.dev/tfbridge/sdkv2 reads them from the
//     schema.Provider), the bridge declares them optional and computed,
//     and hands the provider the proposed new state Terraform would have
//     for the original schema (null where the configuration is null), so
//     that removing such an attribute from the configuration plans its
//     default again, as in Terraform.
//
// Everything else a legacy provider's answer breaks reaches the host
// unchanged and is refused with the contract's message.

import (
	"context"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Defaults names, per resource type, the attributes a legacy provider
// fills in with a default when the configuration leaves them null: each a
// path of attribute and block names (["settings", "mode"] is the
// attribute mode in the block settings; a list or set of blocks is
// stepped through element by element).
type Defaults map[string][][]string

// legacyServer is a protocol 6 server (upgraded from protocol 5) whose
// legacy type system answers are normalised.
type legacyServer struct {
	tfprotov6.ProviderServer
	defaults Defaults
	// resources and dataSources are the schemas' blocks, as the host sees
	// them (attributes with defaults computed: never made null again).
	resources   map[string]*tfprotov6.SchemaBlock
	dataSources map[string]*tfprotov6.SchemaBlock
	// modern is set once the server answers a plan or an apply without
	// declaring the legacy type system: its reads are then left alone.
	modern bool
}

func normaliseLegacy(s tfprotov6.ProviderServer, defaults Defaults) tfprotov6.ProviderServer {
	return &legacyServer{ProviderServer: s, defaults: defaults}
}

// GetProviderSchema keeps the schemas, and declares the attributes with
// defaults computed.
func (s *legacyServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	s.resources = map[string]*tfprotov6.SchemaBlock{}
	s.dataSources = map[string]*tfprotov6.SchemaBlock{}
	for name, schema := range resp.ResourceSchemas {
		if schema == nil {
			continue
		}
		if paths := s.defaults[name]; len(paths) > 0 {
			schema.Block = withComputed(schema.Block, paths)
		}
		s.resources[name] = schema.Block
	}
	for name, schema := range resp.DataSourceSchemas {
		if schema != nil {
			s.dataSources[name] = schema.Block
		}
	}
	return resp, nil
}

// PlanResourceChange hands the provider Terraform's proposed new state
// for its own schema, and normalises a legacy plan against the
// configuration.
func (s *legacyServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	block := s.resources[req.TypeName]
	if block != nil && len(s.defaults[req.TypeName]) > 0 {
		if proposed, ok := withValues(block, req.ProposedNewState, req.Config, func(p, c tftypes.Value) tftypes.Value {
			return defaultsProposed(block, p, c, s.defaults[req.TypeName])
		}); ok {
			req.ProposedNewState = proposed
		}
	}
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if err != nil || resp == nil || block == nil {
		return resp, err
	}
	if !resp.UnsafeToUseLegacyTypeSystem {
		s.modern = true
		return resp, nil
	}
	if planned, ok := withValues(block, resp.PlannedState, req.Config, func(p, c tftypes.Value) tftypes.Value {
		return normaliseBlock(block, p, c)
	}); ok {
		resp.PlannedState = planned
	}
	return resp, nil
}

// ApplyResourceChange normalises a legacy new state against the plan.
func (s *legacyServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	block := s.resources[req.TypeName]
	if err != nil || resp == nil || block == nil {
		return resp, err
	}
	if !resp.UnsafeToUseLegacyTypeSystem {
		s.modern = true
		return resp, nil
	}
	if state, ok := withValues(block, resp.NewState, req.PlannedState, func(n, p tftypes.Value) tftypes.Value {
		return normaliseBlock(block, n, p)
	}); ok {
		resp.NewState = state
	}
	return resp, nil
}

// ReadResource normalises a refreshed state against the prior one. The
// protocol's read answer does not declare the legacy type system: a
// protocol 5 server is taken to use it until a plan or an apply says
// otherwise.
func (s *legacyServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	block := s.resources[req.TypeName]
	if err != nil || resp == nil || block == nil || s.modern {
		return resp, err
	}
	if state, ok := withValues(block, resp.NewState, req.CurrentState, func(n, c tftypes.Value) tftypes.Value {
		return normaliseBlock(block, n, c)
	}); ok {
		resp.NewState = state
	}
	return resp, nil
}

// ReadDataSource normalises a data source's state against its
// configuration, as ReadResource does.
func (s *legacyServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	resp, err := s.ProviderServer.ReadDataSource(ctx, req)
	block := s.dataSources[req.TypeName]
	if err != nil || resp == nil || block == nil || s.modern {
		return resp, err
	}
	if state, ok := withValues(block, resp.State, req.Config, func(n, c tftypes.Value) tftypes.Value {
		return normaliseBlock(block, n, c)
	}); ok {
		resp.State = state
	}
	return resp, nil
}

// withValues decodes answer and reference with block's type, and encodes
// what change makes of them. Anything that does not decode is left as it
// is (ok false): the bridge then reports it as it would without
// normalisation.
func withValues(block *tfprotov6.SchemaBlock, answer, reference *tfprotov6.DynamicValue, change func(answer, reference tftypes.Value) tftypes.Value) (*tfprotov6.DynamicValue, bool) {
	if answer == nil || reference == nil {
		return nil, false
	}
	t := block.ValueType()
	a, err := answer.Unmarshal(t)
	if err != nil {
		return nil, false
	}
	r, err := reference.Unmarshal(t)
	if err != nil {
		return nil, false
	}
	out, err := tfprotov6.NewDynamicValue(t, change(a, r))
	if err != nil {
		return nil, false
	}
	return &out, true
}

// normaliseBlock is the object v of block with every unset primitive
// answered as a zero value made null again, where ref (the configuration,
// plan or prior state it answers) has null; nested blocks are paired with
// ref's (lists by index, sets by their configured attributes, maps by
// key) and normalised the same way.
func normaliseBlock(block *tfprotov6.SchemaBlock, v, ref tftypes.Value) tftypes.Value {
	if block == nil || !v.IsKnown() || v.IsNull() || !ref.IsKnown() || ref.IsNull() {
		return v
	}
	var vs, refs map[string]tftypes.Value
	if v.As(&vs) != nil || ref.As(&refs) != nil {
		return v
	}
	out := make(map[string]tftypes.Value, len(vs))
	for name, value := range vs {
		out[name] = value
	}
	for _, a := range block.Attributes {
		value, ok := vs[a.Name]
		r, hasRef := refs[a.Name]
		if ok && hasRef && !a.Computed && r.IsKnown() && r.IsNull() && isZero(value) {
			out[a.Name] = tftypes.NewValue(value.Type(), nil)
		}
	}
	for _, nb := range block.BlockTypes {
		value, ok := vs[nb.TypeName]
		r, hasRef := refs[nb.TypeName]
		if ok && hasRef {
			out[nb.TypeName] = normaliseNested(nb, value, r)
		}
	}
	return tftypes.NewValue(v.Type(), out)
}

// normaliseNested normalises the blocks v of nb against ref's.
func normaliseNested(nb *tfprotov6.SchemaNestedBlock, v, ref tftypes.Value) tftypes.Value {
	if !v.IsKnown() || !ref.IsKnown() || ref.IsNull() {
		return v
	}
	if v.IsNull() {
		// No blocks is an empty collection, not null.
		if isEmptyCollection(ref) {
			return ref
		}
		return v
	}
	switch nb.Nesting {
	case tfprotov6.SchemaNestedBlockNestingModeSingle, tfprotov6.SchemaNestedBlockNestingModeGroup:
		return normaliseBlock(nb.Block, v, ref)
	case tfprotov6.SchemaNestedBlockNestingModeList:
		var vs, refs []tftypes.Value
		if v.As(&vs) != nil || ref.As(&refs) != nil {
			return v
		}
		out := make([]tftypes.Value, len(vs))
		for i := range vs {
			out[i] = vs[i]
			if i < len(refs) {
				out[i] = normaliseBlock(nb.Block, vs[i], refs[i])
			}
		}
		return tftypes.NewValue(v.Type(), out)
	case tfprotov6.SchemaNestedBlockNestingModeSet:
		var vs, refs []tftypes.Value
		if v.As(&vs) != nil || ref.As(&refs) != nil {
			return v
		}
		return tftypes.NewValue(v.Type(), normaliseSet(nb.Block, vs, refs))
	case tfprotov6.SchemaNestedBlockNestingModeMap:
		var vs, refs map[string]tftypes.Value
		if v.As(&vs) != nil || ref.As(&refs) != nil {
			return v
		}
		out := make(map[string]tftypes.Value, len(vs))
		for k, value := range vs {
			out[k] = value
			if r, ok := refs[k]; ok {
				out[k] = normaliseBlock(nb.Block, value, r)
			}
		}
		return tftypes.NewValue(v.Type(), out)
	}
	return v
}

// normaliseSet pairs each block of a set with the first block of refs it
// matches once normalised (equal in every attribute the provider may not
// compute), and normalises it against that one; a block that matches none
// is left as it is, for the host to judge.
func normaliseSet(block *tfprotov6.SchemaBlock, vs, refs []tftypes.Value) []tftypes.Value {
	used := make([]bool, len(refs))
	out := make([]tftypes.Value, len(vs))
	for i, v := range vs {
		out[i] = v
		for j, r := range refs {
			if used[j] {
				continue
			}
			candidate := normaliseBlock(block, v, r)
			if configuredPart(block, candidate).Equal(configuredPart(block, r)) {
				out[i], used[j] = candidate, true
				break
			}
		}
	}
	return out
}

// configuredPart is the block object v with its computed attributes made
// null: what a configuration decides of it.
func configuredPart(block *tfprotov6.SchemaBlock, v tftypes.Value) tftypes.Value {
	var vs map[string]tftypes.Value
	if block == nil || !v.IsKnown() || v.IsNull() || v.As(&vs) != nil {
		return v
	}
	out := make(map[string]tftypes.Value, len(vs))
	for name, value := range vs {
		out[name] = value
	}
	for _, a := range block.Attributes {
		if value, ok := vs[a.Name]; ok && a.Computed {
			out[a.Name] = tftypes.NewValue(value.Type(), nil)
		}
	}
	for _, nb := range block.BlockTypes {
		value, ok := vs[nb.TypeName]
		if !ok || !value.IsKnown() || value.IsNull() {
			continue
		}
		out[nb.TypeName] = mapBlocks(nb, value, func(b tftypes.Value) tftypes.Value { return configuredPart(nb.Block, b) })
	}
	return tftypes.NewValue(v.Type(), out)
}

// mapBlocks applies f to each block of the known, non-null value v of nb.
func mapBlocks(nb *tfprotov6.SchemaNestedBlock, v tftypes.Value, f func(tftypes.Value) tftypes.Value) tftypes.Value {
	switch nb.Nesting {
	case tfprotov6.SchemaNestedBlockNestingModeList, tfprotov6.SchemaNestedBlockNestingModeSet:
		var vs []tftypes.Value
		if v.As(&vs) != nil {
			return v
		}
		out := make([]tftypes.Value, len(vs))
		for i := range vs {
			out[i] = f(vs[i])
		}
		return tftypes.NewValue(v.Type(), out)
	case tfprotov6.SchemaNestedBlockNestingModeMap:
		var vs map[string]tftypes.Value
		if v.As(&vs) != nil {
			return v
		}
		out := make(map[string]tftypes.Value, len(vs))
		for k := range vs {
			out[k] = f(vs[k])
		}
		return tftypes.NewValue(v.Type(), out)
	}
	return f(v)
}

// isZero reports whether v is known and its type's zero value, or an
// empty collection: what SDKv2 answers for an attribute it was not given.
func isZero(v tftypes.Value) bool {
	if !v.IsKnown() || v.IsNull() {
		return false
	}
	switch {
	case v.Type().Is(tftypes.String):
		var s string
		return v.As(&s) == nil && s == ""
	case v.Type().Is(tftypes.Number):
		var n big.Float
		return v.As(&n) == nil && n.Sign() == 0
	case v.Type().Is(tftypes.Bool):
		var b bool
		return v.As(&b) == nil && !b
	}
	return isEmptyCollection(v)
}

// isEmptyCollection reports whether v is a known list, set or map with
// no elements.
func isEmptyCollection(v tftypes.Value) bool {
	if !v.IsKnown() || v.IsNull() {
		return false
	}
	switch v.Type().(type) {
	case tftypes.List, tftypes.Set:
		var vs []tftypes.Value
		return v.As(&vs) == nil && len(vs) == 0
	case tftypes.Map:
		var vs map[string]tftypes.Value
		return v.As(&vs) == nil && len(vs) == 0
	}
	return false
}

// withComputed is a copy of block with the attributes at paths declared
// computed (they stay optional).
func withComputed(block *tfprotov6.SchemaBlock, paths [][]string) *tfprotov6.SchemaBlock {
	if block == nil {
		return nil
	}
	out := *block
	out.Attributes = make([]*tfprotov6.SchemaAttribute, len(block.Attributes))
	for i, a := range block.Attributes {
		out.Attributes[i] = a
		for _, path := range paths {
			if len(path) == 1 && path[0] == a.Name && a.Optional && !a.Computed {
				copied := *a
				copied.Computed = true
				out.Attributes[i] = &copied
			}
		}
	}
	out.BlockTypes = make([]*tfprotov6.SchemaNestedBlock, len(block.BlockTypes))
	for i, nb := range block.BlockTypes {
		out.BlockTypes[i] = nb
		if inner := within(paths, nb.TypeName); len(inner) > 0 {
			copied := *nb
			copied.Block = withComputed(nb.Block, inner)
			out.BlockTypes[i] = &copied
		}
	}
	return &out
}

// within is the paths that lead into the block name, without that step.
func within(paths [][]string, name string) [][]string {
	var inner [][]string
	for _, path := range paths {
		if len(path) > 1 && path[0] == name {
			inner = append(inner, path[1:])
		}
	}
	return inner
}

// defaultsProposed is the proposed new state p (an object of block) with
// every defaulted attribute that the configuration c leaves null made
// null: the host proposed the prior value, as it does for a computed
// attribute, where Terraform, for the provider's own schema (not
// computed), proposes the configuration's null.
func defaultsProposed(block *tfprotov6.SchemaBlock, p, c tftypes.Value, paths [][]string) tftypes.Value {
	if block == nil || !p.IsKnown() || p.IsNull() || !c.IsKnown() || c.IsNull() {
		return p
	}
	var ps, cs map[string]tftypes.Value
	if p.As(&ps) != nil || c.As(&cs) != nil {
		return p
	}
	out := make(map[string]tftypes.Value, len(ps))
	for name, value := range ps {
		out[name] = value
	}
	for _, path := range paths {
		if len(path) != 1 {
			continue
		}
		if value, ok := ps[path[0]]; ok {
			if configured, ok := cs[path[0]]; ok && configured.IsKnown() && configured.IsNull() {
				out[path[0]] = tftypes.NewValue(value.Type(), nil)
			}
		}
	}
	for _, nb := range block.BlockTypes {
		inner := within(paths, nb.TypeName)
		value, ok := ps[nb.TypeName]
		configured, hasConfig := cs[nb.TypeName]
		if len(inner) == 0 || !ok || !hasConfig {
			continue
		}
		out[nb.TypeName] = proposedNested(nb, value, configured, inner)
	}
	return tftypes.NewValue(p.Type(), out)
}

// proposedNested applies defaultsProposed to the blocks of nb, paired with
// the configuration's as normaliseNested pairs them (a set by position,
// which is the host's proposal's order of the configuration's blocks).
func proposedNested(nb *tfprotov6.SchemaNestedBlock, p, c tftypes.Value, paths [][]string) tftypes.Value {
	if !p.IsKnown() || p.IsNull() || !c.IsKnown() || c.IsNull() {
		return p
	}
	switch nb.Nesting {
	case tfprotov6.SchemaNestedBlockNestingModeSingle, tfprotov6.SchemaNestedBlockNestingModeGroup:
		return defaultsProposed(nb.Block, p, c, paths)
	case tfprotov6.SchemaNestedBlockNestingModeList, tfprotov6.SchemaNestedBlockNestingModeSet:
		var ps, cs []tftypes.Value
		if p.As(&ps) != nil || c.As(&cs) != nil || len(ps) != len(cs) {
			return p
		}
		out := make([]tftypes.Value, len(ps))
		for i := range ps {
			out[i] = defaultsProposed(nb.Block, ps[i], cs[i], paths)
		}
		return tftypes.NewValue(p.Type(), out)
	case tfprotov6.SchemaNestedBlockNestingModeMap:
		var ps, cs map[string]tftypes.Value
		if p.As(&ps) != nil || c.As(&cs) != nil {
			return p
		}
		out := make(map[string]tftypes.Value, len(ps))
		for k, value := range ps {
			out[k] = value
			if configured, ok := cs[k]; ok {
				out[k] = defaultsProposed(nb.Block, value, configured, paths)
			}
		}
		return tftypes.NewValue(p.Type(), out)
	}
	return p
}
