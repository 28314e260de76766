package cairn

import "fmt"

// TypeKind is the kind of a Type.
type TypeKind int

// The kinds of types.
const (
	KindBool TypeKind = iota
	KindNumber
	KindString
	KindDynamic
	KindList
	KindSet
	KindMap
	KindObject
	KindTuple
)

// Type is the type of an attribute. Use the variables Bool, Number, String
// and Dynamic, and ListOf, SetOf, MapOf, ObjectOf and TupleOf.
type Type struct {
	Kind TypeKind
	// Elem is the element type of a list, set or map.
	Elem *Type
	// Attrs are the attribute types of an object.
	Attrs map[string]Type
	// Elems are the element types of a tuple.
	Elems []Type
}

// The primitive types.
var (
	// Bool is true or false.
	Bool = Type{Kind: KindBool}
	// Number is any number, integer or float.
	Number = Type{Kind: KindNumber}
	// String is a UTF-8 string.
	String = Type{Kind: KindString}
	// Dynamic is any type at all: the value decides.
	Dynamic = Type{Kind: KindDynamic}
)

// ListOf is list(elem).
func ListOf(elem Type) Type { return Type{Kind: KindList, Elem: &elem} }

// SetOf is set(elem).
func SetOf(elem Type) Type { return Type{Kind: KindSet, Elem: &elem} }

// MapOf is map(elem).
func MapOf(elem Type) Type { return Type{Kind: KindMap, Elem: &elem} }

// ObjectOf is object({name = type, …}).
func ObjectOf(attrs map[string]Type) Type { return Type{Kind: KindObject, Attrs: attrs} }

// TupleOf is tuple([type, …]).
func TupleOf(elems ...Type) Type { return Type{Kind: KindTuple, Elems: elems} }

// Attr is one attribute of a block. Say who sets it with at least one of
// Required, Optional and Computed (Optional and Computed together: "set
// it, or the provider will"):
//
//	"name":  {Type: cairn.String, Required: true, RequiresReplace: true},
//	"mode":  {Type: cairn.String, Optional: true, Computed: true, Default: "0644"},
//	"id":    {Type: cairn.String, Computed: true},
//	"token": {Type: cairn.String, Optional: true, Sensitive: true, WriteOnly: true},
type Attr struct {
	// Type is the attribute's type (ignored when Nested is set).
	Type Type
	// Nested makes this a nested attribute type: objects of Nested's
	// attributes, written in configuration as an expression (`rules =
	// [{ port = 80 }]`). Unlike a nested block, the attribute as a whole
	// may be null, unknown, optional, computed or sensitive.
	Nested *NestedAttr
	// Required: the configuration must set it.
	Required bool
	// Optional: the configuration may set it.
	Optional bool
	// Computed: the provider may set it when the configuration leaves it
	// null.
	Computed bool
	// Sensitive: never display the value (the SDK also marks it on the
	// wire).
	Sensitive bool
	// WriteOnly: sent to the provider on plan and apply, never stored. The
	// default plan plans it null; apply must return it null. For secrets
	// that must not persist, such as an initial password.
	WriteOnly bool
	// RequiresReplace (a top-level attribute): a change of it cannot be
	// made in place, so the default plan replaces the object (and makes
	// the computed attributes the configuration leaves null unknown: the
	// new object's values are not the old one's).
	RequiresReplace bool
	// Default (a top-level Optional+Computed attribute): the value the
	// default plan uses when the configuration leaves it null
	// (Terraform's `Default`).
	Default any
	// Description is shown to users by `cairn providers schema`.
	Description string
}

// Nesting says how repeated nested blocks (or nested attribute objects)
// are gathered into a value.
type Nesting int

// The nestings.
const (
	// NestingSingle: at most one; an Object, or nil when absent.
	NestingSingle Nesting = iota
	// NestingList: an ordered list of objects.
	NestingList
	// NestingSet: a set of objects.
	NestingSet
	// NestingMap: objects by key (`name "key" { … }` for blocks).
	NestingMap
)

// NestedAttr is the type of a nested attribute: objects of Attributes,
// gathered as Nesting says.
type NestedAttr struct {
	Nesting    Nesting
	Attributes map[string]Attr
}

// NestedBlock is a nested block type: `rule { … }` inside a resource.
type NestedBlock struct {
	Nesting Nesting
	Block   Block
	// MinItems is the fewest blocks the configuration must write.
	MinItems uint32
	// MaxItems is the most it may write (0: no limit).
	MaxItems uint32
}

// Block is the contents of a block: attributes and nested block types.
type Block struct {
	Attributes  map[string]Attr
	Blocks      map[string]NestedBlock
	Description string
}

// Schema is the schema of a resource type, a data source or the provider's
// own configuration.
type Schema struct {
	// Version is the version of the state layout; bump it when the layout
	// changes and implement UpgradeState.
	Version uint64
	Block
}

// ProviderSchema is everything a provider offers.
type ProviderSchema struct {
	// Provider is the schema of the `provider "name" { … }` block.
	Provider Schema
	// Resources are the managed resource types, by type name.
	Resources map[string]Schema
	// DataSources are the data sources, by type name.
	DataSources map[string]Schema
	// EphemeralResources are the ephemeral resource types (Terraform
	// 1.10's `ephemeral "TYPE" "NAME" { … }`), by type name. A provider
	// that declares any must implement EphemeralResourcer. Their Version
	// is unused: nothing of them is stored.
	EphemeralResources map[string]Schema
}

// objectType is the type of a nested attribute's value.
func (n *NestedAttr) objectType() Type {
	attrs := make(map[string]Type, len(n.Attributes))
	for name, a := range n.Attributes {
		attrs[name] = a.valueType()
	}
	obj := ObjectOf(attrs)
	switch n.Nesting {
	case NestingList:
		return ListOf(obj)
	case NestingSet:
		return SetOf(obj)
	case NestingMap:
		return MapOf(obj)
	}
	return obj
}

// valueType is the type of the attribute's value.
func (a Attr) valueType() Type {
	if a.Nested != nil {
		return a.Nested.objectType()
	}
	return a.Type
}

// computedNames are the top-level computed attributes, sorted.
func (s *Schema) computedNames() []string {
	var out []string
	for _, name := range sortedKeys(s.Attributes) {
		if s.Attributes[name].Computed {
			out = append(out, name)
		}
	}
	return out
}

// sensitiveNames are the top-level sensitive attributes.
func (s *Schema) sensitiveNames() map[string]bool {
	out := map[string]bool{}
	for name, a := range s.Attributes {
		if a.Sensitive {
			out[name] = true
		}
	}
	return out
}

// check lists the schema's mistakes, each a sentence starting with at.
func (b *Block) check(at string, errs *[]string) {
	for _, name := range sortedKeys(b.Attributes) {
		a := b.Attributes[name]
		if _, clash := b.Blocks[name]; clash {
			*errs = append(*errs, fmt.Sprintf("%s: `%s` is both an attribute and a block", at, name))
		}
		if !a.Required && !a.Optional && !a.Computed {
			*errs = append(*errs, fmt.Sprintf("%s: attribute `%s` is none of Required, Optional and Computed", at, name))
		}
		if a.Required && (a.Computed || a.Optional) {
			*errs = append(*errs, fmt.Sprintf("%s: attribute `%s` cannot be Required and also Optional or Computed", at, name))
		}
		if a.WriteOnly && a.Computed {
			*errs = append(*errs, fmt.Sprintf("%s: attribute `%s` cannot be both WriteOnly and Computed", at, name))
		}
		if a.Default != nil && !(a.Optional && a.Computed) {
			*errs = append(*errs, fmt.Sprintf("%s: attribute `%s` has a Default, so it must be Optional and Computed", at, name))
		}
		if a.Nested != nil {
			nested := Block{Attributes: a.Nested.Attributes}
			nested.check(at+"."+name, errs)
		}
	}
	for _, name := range sortedKeys(b.Blocks) {
		nb := b.Blocks[name]
		if nb.MaxItems != 0 && nb.MinItems > nb.MaxItems {
			*errs = append(*errs, fmt.Sprintf("%s: block `%s` has MinItems > MaxItems", at, name))
		}
		if nb.Nesting == NestingSingle && nb.MaxItems > 1 {
			*errs = append(*errs, fmt.Sprintf("%s: single block `%s` cannot allow more than one item", at, name))
		}
		nb.Block.check(at+"."+name, errs)
	}
}

// topLevelOnly lists flags that only the top-level block honours, set in a
// nested one (they would be silently ignored there).
func (b *Block) topLevelOnly(at string, errs *[]string) {
	for _, name := range sortedKeys(b.Attributes) {
		a := b.Attributes[name]
		if a.RequiresReplace || a.Default != nil {
			*errs = append(*errs, fmt.Sprintf("%s: attribute `%s`: RequiresReplace and Default are for top-level attributes (use PlanResponse.RequiresReplacePath for nested ones)", at, name))
		}
		if a.Nested != nil {
			nested := Block{Attributes: a.Nested.Attributes}
			nested.topLevelOnly(at+"."+name, errs)
		}
	}
	for _, name := range sortedKeys(b.Blocks) {
		nb := b.Blocks[name]
		nb.Block.topLevelOnly(at+"."+name, errs)
	}
}

// Check returns the schema's mistakes (empty when there are none): the SDK
// refuses to serve a provider whose schema has any.
func (ps *ProviderSchema) Check() []string {
	var errs []string
	check := func(at string, s Schema) {
		s.Block.check(at, &errs)
		for _, name := range sortedKeys(s.Blocks) {
			nb := s.Blocks[name]
			nb.Block.topLevelOnly(at+"."+name, &errs)
		}
		for _, name := range sortedKeys(s.Attributes) {
			if n := s.Attributes[name].Nested; n != nil {
				nested := Block{Attributes: n.Attributes}
				nested.topLevelOnly(at+"."+name, &errs)
			}
		}
	}
	check("provider", ps.Provider)
	for _, name := range sortedKeys(ps.Resources) {
		check("resource "+name, ps.Resources[name])
	}
	for _, name := range sortedKeys(ps.DataSources) {
		check("data source "+name, ps.DataSources[name])
	}
	for _, name := range sortedKeys(ps.EphemeralResources) {
		check("ephemeral resource "+name, ps.EphemeralResources[name])
	}
	return errs
}

// nullWriteOnly returns value (an object of this block) with every
// write-only attribute, at any depth, null: what a plan or a new state
// must hold.
func (b *Block) nullWriteOnly(value any) any {
	obj, ok := Unwrap(value).(Object)
	if !ok {
		return value
	}
	out := obj.Clone()
	for name, v := range out {
		if a, ok := b.Attributes[name]; ok {
			switch {
			case a.WriteOnly:
				out[name] = nil
			case a.Nested != nil:
				nested := Block{Attributes: a.Nested.Attributes}
				out[name] = nested.nullWriteOnlyEach(a.Nested.Nesting, v)
			}
		} else if nb, ok := b.Blocks[name]; ok {
			out[name] = nb.Block.nullWriteOnlyEach(nb.Nesting, v)
		}
	}
	return out
}

func (b *Block) nullWriteOnlyEach(nesting Nesting, v any) any {
	if nesting == NestingSingle {
		return b.nullWriteOnly(v)
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, o := range x {
			out[i] = b.nullWriteOnly(o)
		}
		return out
	case Set:
		out := make(Set, len(x))
		for i, o := range x {
			out[i] = b.nullWriteOnly(o)
		}
		return out
	case Map:
		out := make(Map, len(x))
		for k, o := range x {
			out[k] = b.nullWriteOnly(o)
		}
		return out
	}
	return v
}
