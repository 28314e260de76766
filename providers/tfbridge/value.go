package tfbridge

// Values: cairn's (the SDK's Go values, as decoded from the wire) to
// tftypes.Value and msgpack DynamicValues, and back.
//
// Numbers: cairn carries a number as a signed 64-bit integer or a finite
// double, both exact in a big.Float, so numbers going in are exact. A
// number coming out is sent as an integer when it is a whole number in the
// int64 range, else as the nearest double (an error when it has none).
//
// Unknowns: tftypes (terraform-plugin-go v0.31) carries no refinements,
// so a refined unknown from cairn reaches the server as a plain unknown
// (the host still holds the provider to the refinements), and unknowns
// the server plans are plain.

import (
	"fmt"
	"math"
	"math/big"
	"sort"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// named is a value and what it is, for messages.
type named struct {
	value cairn.Object
	what  string
}

// dynamicValues encodes several objects of type t.
func dynamicValues(t tftypes.Type, values ...named) ([]*tfprotov6.DynamicValue, error) {
	out := make([]*tfprotov6.DynamicValue, len(values))
	for i, v := range values {
		dv, err := dynamicValue(v.value, t, v.what)
		if err != nil {
			return nil, err
		}
		out[i] = dv
	}
	return out, nil
}

// dynamicValue encodes an object (nil: null) of type t as msgpack.
func dynamicValue(o cairn.Object, t tftypes.Type, what string) (*tfprotov6.DynamicValue, error) {
	var v any
	if o != nil {
		v = o
	}
	tv, err := toTerraform(v, t, tftypes.NewAttributePath())
	if err == nil {
		var dv tfprotov6.DynamicValue
		if dv, err = tfprotov6.NewDynamicValue(t, tv); err == nil {
			return &dv, nil
		}
	}
	return nil, cairn.Errorf("The %s cannot be given to the provider", what).WithDetail("%v", err)
}

// objectOf decodes a DynamicValue of object type t (nil or null: nil).
func objectOf(dv *tfprotov6.DynamicValue, t tftypes.Type, what string) (cairn.Object, error) {
	if dv == nil {
		return nil, nil
	}
	tv, err := dv.Unmarshal(t)
	if err != nil {
		return nil, cairn.Errorf("Provider bug: the %s the provider answered cannot be decoded", what).WithDetail("%v", err)
	}
	v, err := fromTerraform(tv, tftypes.NewAttributePath())
	if err != nil {
		return nil, cairn.Errorf("Provider bug: the %s the provider answered has no cairn value", what).WithDetail("%v", err)
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(cairn.Object)
	if !ok {
		return nil, cairn.Errorf("Provider bug: the %s the provider answered is not an object", what)
	}
	return obj, nil
}

// toTerraform is v as a tftypes.Value of type t.
func toTerraform(v any, t tftypes.Type, at *tftypes.AttributePath) (tftypes.Value, error) {
	if s, ok := v.(cairn.Sensitive); ok {
		v = s.Value
	}
	switch v.(type) {
	case nil:
		return tftypes.NewValue(t, nil), nil
	case cairn.Unknown:
		return tftypes.NewValue(t, tftypes.UnknownValue), nil
	}
	if t.Is(tftypes.DynamicPseudoType) {
		concrete, err := typeOf(v, at)
		if err != nil {
			return tftypes.Value{}, err
		}
		return toTerraform(v, concrete, at)
	}
	switch {
	case t.Is(tftypes.String):
		s, ok := v.(string)
		if !ok {
			return mismatch(v, "a string", at)
		}
		return tftypes.NewValue(t, s), nil
	case t.Is(tftypes.Bool):
		b, ok := v.(bool)
		if !ok {
			return mismatch(v, "a bool", at)
		}
		return tftypes.NewValue(t, b), nil
	case t.Is(tftypes.Number):
		n, ok := bigNumber(v)
		if !ok {
			return mismatch(v, "a number", at)
		}
		return tftypes.NewValue(t, n), nil
	}
	switch x := t.(type) {
	case tftypes.List:
		return elementsTo(v, t, func(int) tftypes.Type { return x.ElementType }, at)
	case tftypes.Set:
		return elementsTo(v, t, func(int) tftypes.Type { return x.ElementType }, at)
	case tftypes.Tuple:
		xs, ok := elements(v)
		if !ok || len(xs) != len(x.ElementTypes) {
			return mismatch(v, fmt.Sprintf("a tuple of %d elements", len(x.ElementTypes)), at)
		}
		return elementsTo(v, t, func(i int) tftypes.Type { return x.ElementTypes[i] }, at)
	case tftypes.Map:
		m, ok := entries(v)
		if !ok {
			return mismatch(v, "a map", at)
		}
		out := make(map[string]tftypes.Value, len(m))
		for k, e := range m {
			ev, err := toTerraform(e, x.ElementType, at.WithElementKeyString(k))
			if err != nil {
				return tftypes.Value{}, err
			}
			out[k] = ev
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.Object:
		return objectTo(v, x, at)
	}
	return tftypes.Value{}, at.NewErrorf("the type %s has no cairn equivalent", t)
}

func objectTo(v any, t tftypes.Object, at *tftypes.AttributePath) (tftypes.Value, error) {
	m, ok := entries(v)
	if !ok {
		return mismatch(v, "an object", at)
	}
	for name := range m {
		if _, known := t.AttributeTypes[name]; !known {
			return tftypes.Value{}, at.NewErrorf("the object has an attribute %q its type does not have", name)
		}
	}
	out := make(map[string]tftypes.Value, len(t.AttributeTypes))
	// Attributes the value leaves out are null, as the host means them.
	for name, at2 := range t.AttributeTypes {
		av, err := toTerraform(m[name], at2, at.WithAttributeName(name))
		if err != nil {
			return tftypes.Value{}, err
		}
		out[name] = av
	}
	return tftypes.NewValue(t, out), nil
}

func elementsTo(v any, t tftypes.Type, elemType func(int) tftypes.Type, at *tftypes.AttributePath) (tftypes.Value, error) {
	xs, ok := elements(v)
	if !ok {
		return mismatch(v, "a collection", at)
	}
	out := make([]tftypes.Value, len(xs))
	for i, e := range xs {
		ev, err := toTerraform(e, elemType(i), at.WithElementKeyInt(i))
		if err != nil {
			return tftypes.Value{}, err
		}
		out[i] = ev
	}
	return tftypes.NewValue(t, out), nil
}

// typeOf is the concrete type of a value given where the type is dynamic:
// the value's own kind decides (cairn's values say list, set, tuple, map
// or object).
func typeOf(v any, at *tftypes.AttributePath) (tftypes.Type, error) {
	if s, ok := v.(cairn.Sensitive); ok {
		v = s.Value
	}
	switch x := v.(type) {
	case nil, cairn.Unknown:
		return tftypes.DynamicPseudoType, nil
	case string:
		return tftypes.String, nil
	case bool:
		return tftypes.Bool, nil
	case cairn.Tuple:
		types := make([]tftypes.Type, len(x))
		for i, e := range x {
			var err error
			if types[i], err = typeOf(e, at.WithElementKeyInt(i)); err != nil {
				return nil, err
			}
		}
		return tftypes.Tuple{ElementTypes: types}, nil
	case cairn.Set:
		elem, err := elementType(x, at)
		return tftypes.Set{ElementType: elem}, err
	case []any:
		elem, err := elementType(x, at)
		return tftypes.List{ElementType: elem}, err
	case cairn.Map:
		values := make([]any, 0, len(x))
		for _, k := range sortedKeys(x) {
			values = append(values, x[k])
		}
		elem, err := elementType(values, at)
		return tftypes.Map{ElementType: elem}, err
	case cairn.Object:
		attrs := make(map[string]tftypes.Type, len(x))
		for name, e := range x {
			var err error
			if attrs[name], err = typeOf(e, at.WithAttributeName(name)); err != nil {
				return nil, err
			}
		}
		return tftypes.Object{AttributeTypes: attrs}, nil
	}
	if _, ok := bigNumber(v); ok {
		return tftypes.Number, nil
	}
	return nil, at.NewErrorf("a %T has no Terraform type", v)
}

// elementType is the one type of a collection's elements: the first known
// element's (null and unknown elements fit any).
func elementType(xs []any, at *tftypes.AttributePath) (tftypes.Type, error) {
	var found tftypes.Type = tftypes.DynamicPseudoType
	for i, e := range xs {
		t, err := typeOf(e, at.WithElementKeyInt(i))
		if err != nil {
			return nil, err
		}
		if t.Is(tftypes.DynamicPseudoType) {
			continue
		}
		if found.Is(tftypes.DynamicPseudoType) {
			found = t
		} else if !found.Equal(t) {
			return nil, at.NewErrorf("the collection's elements have different types (%s and %s)", found, t)
		}
	}
	return found, nil
}

func mismatch(v any, want string, at *tftypes.AttributePath) (tftypes.Value, error) {
	return tftypes.Value{}, at.NewErrorf("expected %s, got a %T", want, v)
}

func elements(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case cairn.Set:
		return x, true
	case cairn.Tuple:
		return x, true
	}
	return nil, false
}

func entries(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case cairn.Object:
		return x, true
	case cairn.Map:
		return x, true
	case map[string]any:
		return x, true
	}
	return nil, false
}

// bigNumber is a cairn number as an exact big.Float.
func bigNumber(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Float).SetInt64(x), true
	case int:
		return new(big.Float).SetInt64(int64(x)), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Float).SetFloat64(x), true
	}
	return nil, false
}

// fromTerraform is a tftypes.Value as a cairn value.
func fromTerraform(v tftypes.Value, at *tftypes.AttributePath) (any, error) {
	if !v.IsKnown() {
		return cairn.Unknown{}, nil
	}
	if v.IsNull() {
		return nil, nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		return s, v.As(&s)
	case t.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b)
	case t.Is(tftypes.Number):
		n := new(big.Float)
		if err := v.As(&n); err != nil {
			return nil, err
		}
		return numberOf(n, at)
	}
	switch t.(type) {
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var xs []tftypes.Value
		if err := v.As(&xs); err != nil {
			return nil, err
		}
		out := make([]any, len(xs))
		for i, e := range xs {
			var err error
			if out[i], err = fromTerraform(e, at.WithElementKeyInt(i)); err != nil {
				return nil, err
			}
		}
		switch t.(type) {
		case tftypes.Set:
			return cairn.Set(out), nil
		case tftypes.Tuple:
			return cairn.Tuple(out), nil
		}
		return out, nil
	case tftypes.Map, tftypes.Object:
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			step := at.WithElementKeyString(k)
			if _, isObject := t.(tftypes.Object); isObject {
				step = at.WithAttributeName(k)
			}
			var err error
			if out[k], err = fromTerraform(e, step); err != nil {
				return nil, err
			}
		}
		if _, isObject := t.(tftypes.Object); isObject {
			return cairn.Object(out), nil
		}
		return cairn.Map(out), nil
	}
	return nil, at.NewErrorf("the type %s has no cairn equivalent", t)
}

// numberOf is n as cairn carries it: an int64 when it is a whole number
// in range, else the nearest finite double.
func numberOf(n *big.Float, at *tftypes.AttributePath) (any, error) {
	if n.IsInt() {
		if i, acc := n.Int64(); acc == big.Exact {
			return i, nil
		}
	}
	f, _ := n.Float64()
	if math.IsInf(f, 0) {
		return nil, at.NewErrorf("the number %s is beyond what cairn carries (a 64-bit integer or a finite double)", n.Text('g', 20))
	}
	return f, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
