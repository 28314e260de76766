package cairn

// The flattened wire encodings (WIT has no recursive types: a value, a
// type or a schema travels as a list of nodes, root first, children by
// index) of values, types, schemas, paths and diagnostics, in the generated
// binding types.

import (
	"fmt"
	"math"
	"sort"

	witTypes "cairn.dev/sdk-go/internal/gopkg/wit/types"
	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// wireError is a malformed value from the host, or a Go value that has no
// cairn value; reported as a provider bug or a host bug by the glue.
type wireError struct{ msg string }

func (e *wireError) Error() string { return e.msg }

func wireErrorf(format string, args ...any) error {
	return &wireError{fmt.Sprintf(format, args...)}
}

// decodeValue is the Go value of a wire value (an empty node list is nil).
// Sensitive marks are dropped: the host keeps them.
func decodeValue(v wire.Value) (any, error) {
	if len(v.Nodes) == 0 {
		return nil, nil
	}
	d := decoder{nodes: v.Nodes, seen: make([]bool, len(v.Nodes))}
	return d.node(0, "value")
}

type decoder struct {
	nodes []wire.Node
	// Each node must be reached once: a cycle or a shared child is
	// malformed, as the host would also say.
	seen []bool
}

func (d *decoder) node(index uint32, where string) (any, error) {
	if int(index) >= len(d.nodes) {
		return nil, wireErrorf("%s: node index %d is out of range (the value has %d nodes)", where, index, len(d.nodes))
	}
	if d.seen[index] {
		return nil, wireErrorf("%s: node %d is reached twice (a cycle or a shared node)", where, index)
	}
	d.seen[index] = true
	k := d.nodes[index].Kind
	switch k.Tag() {
	case wire.ValueNode_Null:
		return nil, nil
	case wire.ValueNode_Unknown:
		return decodeRefinements(k.Unknown()), nil
	case wire.ValueNode_Boolean:
		return k.Boolean(), nil
	case wire.ValueNode_Integer:
		return k.Integer(), nil
	case wire.ValueNode_Float:
		f := k.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, wireErrorf("%s: the number %v is not finite", where, f)
		}
		return f, nil
	case wire.ValueNode_Text:
		return k.Text(), nil
	case wire.ValueNode_List:
		return d.list(k.List(), where)
	case wire.ValueNode_Set:
		xs, err := d.list(k.Set(), where)
		return Set(xs), err
	case wire.ValueNode_Tuple:
		xs, err := d.list(k.Tuple(), where)
		return Tuple(xs), err
	case wire.ValueNode_Map:
		m, err := d.entries(k.Map(), where, true)
		return Map(m), err
	case wire.ValueNode_Object:
		m, err := d.entries(k.Object(), where, false)
		return Object(m), err
	}
	return nil, wireErrorf("%s: node %d has an unexpected kind %d", where, index, k.Tag())
}

func (d *decoder) list(children []uint32, where string) ([]any, error) {
	out := make([]any, len(children))
	for i, c := range children {
		v, err := d.node(c, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (d *decoder) entries(children []witTypes.Tuple2[string, uint32], where string, keyed bool) (map[string]any, error) {
	out := make(map[string]any, len(children))
	for _, e := range children {
		if _, twice := out[e.F0]; twice {
			return nil, wireErrorf("%s: the key %q appears twice", where, e.F0)
		}
		at := where + "." + e.F0
		if keyed {
			at = fmt.Sprintf("%s[%q]", where, e.F0)
		}
		v, err := d.node(e.F1, at)
		if err != nil {
			return nil, err
		}
		out[e.F0] = v
	}
	return out, nil
}

func decodeRefinements(r wire.Refinements) Unknown {
	u := Unknown{NotNull: r.NotNull}
	if r.Prefix.IsSome() {
		p := r.Prefix.Some()
		u.Prefix = &p
	}
	bound := func(o witTypes.Option[wire.NumberBound]) *Bound {
		if o.IsNone() {
			return nil
		}
		b := o.Some()
		if b.Value.Tag() == wire.Number_Integer {
			return &Bound{Value: b.Value.Integer(), Inclusive: b.Inclusive}
		}
		return &Bound{Value: b.Value.Float(), Inclusive: b.Inclusive}
	}
	u.Lower, u.Upper = bound(r.Lower), bound(r.Upper)
	if r.MinLength.IsSome() {
		n := r.MinLength.Some()
		u.MinLength = &n
	}
	if r.MaxLength.IsSome() {
		n := r.MaxLength.Some()
		u.MaxLength = &n
	}
	return u
}

// encodeValue is the wire value of a Go value. Top-level attributes of an
// object named in sensitive are marked sensitive.
func encodeValue(v any, sensitive map[string]bool) (wire.Value, error) {
	e := encoder{}
	if _, err := e.put(v, false, "value", sensitive); err != nil {
		return wire.Value{}, err
	}
	return wire.Value{Nodes: e.nodes}, nil
}

type encoder struct{ nodes []wire.Node }

// put appends v (its node first, then its children's) and returns its
// index; topSensitive applies to v's own attributes when v is the root.
func (e *encoder) put(v any, sensitive bool, where string, topSensitive map[string]bool) (uint32, error) {
	if s, ok := v.(Sensitive); ok {
		return e.put(s.Value, true, where, topSensitive)
	}
	at := uint32(len(e.nodes))
	// Reserved: the parent precedes its children.
	e.nodes = append(e.nodes, wire.Node{})
	kind, err := e.kind(v, where, topSensitive)
	if err != nil {
		return 0, err
	}
	e.nodes[at] = wire.Node{Kind: kind, Sensitive: sensitive}
	return at, nil
}

func (e *encoder) kind(v any, where string, topSensitive map[string]bool) (wire.ValueNode, error) {
	switch x := v.(type) {
	case nil:
		return wire.MakeValueNodeNull(), nil
	case Unknown:
		r, err := encodeRefinements(x, where)
		return wire.MakeValueNodeUnknown(r), err
	case bool:
		return wire.MakeValueNodeBoolean(x), nil
	case string:
		return wire.MakeValueNodeText(x), nil
	case []any:
		xs, err := e.list(x, where)
		return wire.MakeValueNodeList(xs), err
	case []string:
		xs, err := e.list(anySlice(x), where)
		return wire.MakeValueNodeList(xs), err
	case Set:
		xs, err := e.list(x, where)
		return wire.MakeValueNodeSet(xs), err
	case Tuple:
		xs, err := e.list(x, where)
		return wire.MakeValueNodeTuple(xs), err
	case Map:
		m, err := e.entries(x, where, nil)
		return wire.MakeValueNodeMap(m), err
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		entries, err := e.entries(m, where, nil)
		return wire.MakeValueNodeMap(entries), err
	case Object:
		m, err := e.entries(x, where, topSensitive)
		return wire.MakeValueNodeObject(m), err
	case map[string]any:
		m, err := e.entries(x, where, topSensitive)
		return wire.MakeValueNodeObject(m), err
	}
	if n, ok := toNumber(v); ok {
		return encodeNumber(n, where)
	}
	return wire.ValueNode{}, wireErrorf("%s: a %s has no cairn value (use nil, bool, a number, string, []any, Set, Tuple, Map, Object, Unknown or Sensitive)", where, describe(v))
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// encodeNumber sends whole numbers in the int64 range as integers, as the
// Rust SDK does, so that 3.0 and 3 are the same value.
func encodeNumber(n any, where string) (wire.ValueNode, error) {
	switch x := n.(type) {
	case int64:
		return wire.MakeValueNodeInteger(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return wire.ValueNode{}, wireErrorf("%s: the number %v is not finite (cairn numbers are finite)", where, x)
		}
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return wire.MakeValueNodeInteger(int64(x)), nil
		}
		return wire.MakeValueNodeFloat(x), nil
	}
	return wire.ValueNode{}, wireErrorf("%s: not a number", where)
}

func (e *encoder) list(xs []any, where string) ([]uint32, error) {
	out := make([]uint32, len(xs))
	for i, x := range xs {
		c, err := e.put(x, false, fmt.Sprintf("%s[%d]", where, i), nil)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (e *encoder) entries(m map[string]any, where string, topSensitive map[string]bool) ([]witTypes.Tuple2[string, uint32], error) {
	// Sorted, so that the same value always encodes the same way.
	keys := sortedKeys(m)
	out := make([]witTypes.Tuple2[string, uint32], len(keys))
	for i, k := range keys {
		c, err := e.put(m[k], topSensitive[k], where+"."+k, nil)
		if err != nil {
			return nil, err
		}
		out[i] = witTypes.Tuple2[string, uint32]{F0: k, F1: c}
	}
	return out, nil
}

func encodeRefinements(u Unknown, where string) (wire.Refinements, error) {
	r := wire.Refinements{NotNull: u.NotNull || u.Prefix != nil}
	if u.Prefix != nil {
		r.Prefix = witTypes.Some(*u.Prefix)
	}
	bound := func(b *Bound) (witTypes.Option[wire.NumberBound], error) {
		if b == nil {
			return witTypes.None[wire.NumberBound](), nil
		}
		n, ok := toNumber(b.Value)
		if !ok {
			return witTypes.None[wire.NumberBound](), wireErrorf("%s: a number bound must be a number, not %s", where, describe(b.Value))
		}
		var num wire.Number
		switch x := n.(type) {
		case int64:
			num = wire.MakeNumberInteger(x)
		case float64:
			num = wire.MakeNumberFloat(x)
		}
		return witTypes.Some(wire.NumberBound{Value: num, Inclusive: b.Inclusive}), nil
	}
	var err error
	if r.Lower, err = bound(u.Lower); err != nil {
		return r, err
	}
	if r.Upper, err = bound(u.Upper); err != nil {
		return r, err
	}
	if u.MinLength != nil {
		r.MinLength = witTypes.Some(*u.MinLength)
	}
	if u.MaxLength != nil {
		r.MaxLength = witTypes.Some(*u.MaxLength)
	}
	return r, nil
}

// encodeType is the flattened wire type, root first.
func encodeType(t Type) wire.TypeExpr {
	var nodes []wire.TypeNode
	var put func(t Type) uint32
	put = func(t Type) uint32 {
		at := uint32(len(nodes))
		nodes = append(nodes, wire.MakeTypeNodeDynamic())
		var n wire.TypeNode
		elem := func() Type {
			if t.Elem == nil {
				return Dynamic
			}
			return *t.Elem
		}
		switch t.Kind {
		case KindBool:
			n = wire.MakeTypeNodeBoolean()
		case KindNumber:
			n = wire.MakeTypeNodeNumber()
		case KindString:
			n = wire.MakeTypeNodeText()
		case KindList:
			n = wire.MakeTypeNodeList(put(elem()))
		case KindSet:
			n = wire.MakeTypeNodeSet(put(elem()))
		case KindMap:
			n = wire.MakeTypeNodeMap(put(elem()))
		case KindObject:
			keys := sortedKeys(t.Attrs)
			attrs := make([]witTypes.Tuple2[string, uint32], len(keys))
			for i, k := range keys {
				attrs[i] = witTypes.Tuple2[string, uint32]{F0: k, F1: put(t.Attrs[k])}
			}
			n = wire.MakeTypeNodeObject(attrs)
		case KindTuple:
			elems := make([]uint32, len(t.Elems))
			for i, e := range t.Elems {
				elems[i] = put(e)
			}
			n = wire.MakeTypeNodeTuple(elems)
		default:
			n = wire.MakeTypeNodeDynamic()
		}
		nodes[at] = n
		return at
	}
	put(t)
	return wire.TypeExpr{Nodes: nodes}
}

func encodeNesting(n Nesting) wire.Nesting {
	switch n {
	case NestingList:
		return wire.Nesting_List
	case NestingSet:
		return wire.Nesting_Set
	case NestingMap:
		return wire.Nesting_Map
	}
	return wire.Nesting_Single
}

// encodeBlock appends b and its nested blocks to out, b first; returns its
// index.
func encodeBlock(b *Block, out *[]wire.Block) uint32 {
	at := uint32(len(*out))
	*out = append(*out, wire.Block{})
	var blocks []wire.NestedBlock
	for _, name := range sortedKeys(b.Blocks) {
		nb := b.Blocks[name]
		blocks = append(blocks, wire.NestedBlock{
			Name: name, Nesting: encodeNesting(nb.Nesting), Block: encodeBlock(&nb.Block, out),
			MinItems: nb.MinItems, MaxItems: nb.MaxItems,
		})
	}
	var attrs []wire.Attribute
	for _, name := range sortedKeys(b.Attributes) {
		a := b.Attributes[name]
		w := wire.Attribute{
			Name: name, Required: a.Required, Optional: a.Optional, Computed: a.Computed,
			Sensitive: a.Sensitive, WriteOnly: a.WriteOnly, Description: a.Description,
			Nested: witTypes.None[wire.NestedType](),
		}
		if a.Nested != nil {
			// The host derives a nested attribute's type from `nested`.
			nested := Block{Attributes: a.Nested.Attributes}
			w.Nested = witTypes.Some(wire.NestedType{Nesting: encodeNesting(a.Nested.Nesting), Block: encodeBlock(&nested, out)})
		} else {
			w.Type = encodeType(a.Type)
		}
		attrs = append(attrs, w)
	}
	(*out)[at] = wire.Block{Attributes: attrs, Blocks: blocks, Description: b.Description}
	return at
}

func encodeSchema(s *Schema) wire.Schema {
	var blocks []wire.Block
	encodeBlock(&s.Block, &blocks)
	return wire.Schema{Version: s.Version, Blocks: blocks}
}

func encodeProviderSchema(ps *ProviderSchema) wire.ProviderSchema {
	named := func(m map[string]Schema) []witTypes.Tuple2[string, wire.Schema] {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]witTypes.Tuple2[string, wire.Schema], len(names))
		for i, n := range names {
			s := m[n]
			out[i] = witTypes.Tuple2[string, wire.Schema]{F0: n, F1: encodeSchema(&s)}
		}
		return out
	}
	return wire.ProviderSchema{Provider: encodeSchema(&ps.Provider), Resources: named(ps.Resources), DataSources: named(ps.DataSources)}
}

func encodePath(p Path) []wire.PathStep {
	out := make([]wire.PathStep, len(p))
	for i, s := range p {
		switch {
		case s.IsKey:
			out[i] = wire.MakePathStepKey(s.Key)
		case s.IsIndex:
			out[i] = wire.MakePathStepIndex(s.Index)
		default:
			out[i] = wire.MakePathStepAttribute(s.Attribute)
		}
	}
	return out
}

func encodeDiagnostics(ds Diagnostics) []wire.Diagnostic {
	out := make([]wire.Diagnostic, 0, len(ds))
	for _, d := range ds {
		if d == nil {
			continue
		}
		sev := wire.Severity_Error
		if d.Severity == SeverityWarning {
			sev = wire.Severity_Warning
		}
		out = append(out, wire.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Path: encodePath(d.Path)})
	}
	return out
}
