package tfbridge

// Schemas: tfprotov6's schemas in cairn's form.

import (
	"fmt"
	"sort"
	"strings"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// convertSchema is s in cairn's form, and what of it cairn cannot
// represent (each with its attribute path).
func convertSchema(s *tfprotov6.Schema) (cairn.Schema, []string) {
	var errs []string
	out := cairn.Schema{}
	if s == nil {
		return out, nil
	}
	if s.Version < 0 {
		errs = append(errs, fmt.Sprintf("the schema version %d is negative", s.Version))
	} else {
		out.Version = uint64(s.Version)
	}
	out.Block = convertBlock(s.Block, "", &errs)
	return out, errs
}

func convertBlock(b *tfprotov6.SchemaBlock, at string, errs *[]string) cairn.Block {
	out := cairn.Block{Attributes: map[string]cairn.Attr{}, Blocks: map[string]cairn.NestedBlock{}}
	if b == nil {
		return out
	}
	out.Description = described(b.Description, b.Deprecated, b.DeprecationMessage)
	for _, a := range b.Attributes {
		if a != nil {
			out.Attributes[a.Name] = convertAttribute(a, join(at, a.Name), errs)
		}
	}
	for _, nb := range b.BlockTypes {
		if nb != nil {
			out.Blocks[nb.TypeName] = convertNestedBlock(nb, join(at, nb.TypeName), errs)
		}
	}
	return out
}

func convertAttribute(a *tfprotov6.SchemaAttribute, at string, errs *[]string) cairn.Attr {
	out := cairn.Attr{
		Required:    a.Required,
		Optional:    a.Optional,
		Computed:    a.Computed,
		Sensitive:   a.Sensitive,
		WriteOnly:   a.WriteOnly,
		Description: described(a.Description, a.Deprecated, a.DeprecationMessage),
	}
	if a.NestedType != nil {
		nested := &cairn.NestedAttr{Attributes: map[string]cairn.Attr{}}
		nesting, ok := objectNesting(a.NestedType.Nesting)
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s: the nested attribute's nesting mode %s has no cairn equivalent", at, a.NestedType.Nesting))
		}
		nested.Nesting = nesting
		for _, inner := range a.NestedType.Attributes {
			if inner != nil {
				nested.Attributes[inner.Name] = convertAttribute(inner, join(at, inner.Name), errs)
			}
		}
		out.Nested = nested
		return out
	}
	t, err := convertType(a.Type)
	if err != nil {
		*errs = append(*errs, fmt.Sprintf("%s: %v", at, err))
	}
	out.Type = t
	return out
}

func convertNestedBlock(nb *tfprotov6.SchemaNestedBlock, at string, errs *[]string) cairn.NestedBlock {
	out := cairn.NestedBlock{Block: convertBlock(nb.Block, at, errs)}
	switch nb.Nesting {
	case tfprotov6.SchemaNestedBlockNestingModeSingle:
		out.Nesting = cairn.NestingSingle
	case tfprotov6.SchemaNestedBlockNestingModeList:
		out.Nesting = cairn.NestingList
	case tfprotov6.SchemaNestedBlockNestingModeSet:
		out.Nesting = cairn.NestingSet
	case tfprotov6.SchemaNestedBlockNestingModeMap:
		out.Nesting = cairn.NestingMap
	default:
		// GROUP is an object that is never null (absent: all attributes
		// null); cairn's single block is null when absent, so mapping one
		// to the other would change values.
		*errs = append(*errs, fmt.Sprintf("%s: the block nesting mode %s has no cairn equivalent", at, nb.Nesting))
	}
	if nb.MinItems < 0 || nb.MaxItems < 0 || nb.MinItems > int64(^uint32(0)) || nb.MaxItems > int64(^uint32(0)) {
		*errs = append(*errs, fmt.Sprintf("%s: min_items %d or max_items %d is out of range", at, nb.MinItems, nb.MaxItems))
	} else {
		out.MinItems, out.MaxItems = uint32(nb.MinItems), uint32(nb.MaxItems)
	}
	return out
}

func objectNesting(n tfprotov6.SchemaObjectNestingMode) (cairn.Nesting, bool) {
	switch n {
	case tfprotov6.SchemaObjectNestingModeSingle:
		return cairn.NestingSingle, true
	case tfprotov6.SchemaObjectNestingModeList:
		return cairn.NestingList, true
	case tfprotov6.SchemaObjectNestingModeSet:
		return cairn.NestingSet, true
	case tfprotov6.SchemaObjectNestingModeMap:
		return cairn.NestingMap, true
	}
	return cairn.NestingSingle, false
}

// convertType is t as a cairn type. Object types with optional
// attributes (a type constraint, not a value type) have none.
func convertType(t tftypes.Type) (cairn.Type, error) {
	switch {
	case t == nil:
		return cairn.Type{}, fmt.Errorf("the attribute has no type")
	case t.Is(tftypes.DynamicPseudoType):
		return cairn.Dynamic, nil
	case t.Is(tftypes.String):
		return cairn.String, nil
	case t.Is(tftypes.Number):
		return cairn.Number, nil
	case t.Is(tftypes.Bool):
		return cairn.Bool, nil
	}
	switch x := t.(type) {
	case tftypes.List:
		elem, err := convertType(x.ElementType)
		return cairn.ListOf(elem), err
	case tftypes.Set:
		elem, err := convertType(x.ElementType)
		return cairn.SetOf(elem), err
	case tftypes.Map:
		elem, err := convertType(x.ElementType)
		return cairn.MapOf(elem), err
	case tftypes.Tuple:
		elems := make([]cairn.Type, len(x.ElementTypes))
		for i, e := range x.ElementTypes {
			var err error
			if elems[i], err = convertType(e); err != nil {
				return cairn.Type{}, err
			}
		}
		return cairn.TupleOf(elems...), nil
	case tftypes.Object:
		if len(x.OptionalAttributes) > 0 {
			names := make([]string, 0, len(x.OptionalAttributes))
			for n := range x.OptionalAttributes {
				names = append(names, n)
			}
			sort.Strings(names)
			return cairn.Type{}, fmt.Errorf("the object type has optional attributes (%s), which cairn's types do not have", strings.Join(names, ", "))
		}
		attrs := make(map[string]cairn.Type, len(x.AttributeTypes))
		for name, at := range x.AttributeTypes {
			var err error
			if attrs[name], err = convertType(at); err != nil {
				return cairn.Type{}, err
			}
		}
		return cairn.ObjectOf(attrs), nil
	}
	return cairn.Type{}, fmt.Errorf("the type %s has no cairn equivalent", t)
}

// described is a description with the deprecation, which cairn's schema
// has no field for, said in it.
func described(description string, deprecated bool, message string) string {
	if !deprecated {
		return description
	}
	note := "Deprecated."
	if message != "" {
		note = "Deprecated: " + message
	}
	if description == "" {
		return note
	}
	return description + " " + note
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
