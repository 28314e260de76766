package cairn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// errDefaultUpgrade is Base.UpgradeState's answer: the glue then reads a
// state of the current version with StateFromJSON.
var errDefaultUpgrade = errors.New("cairn: default upgrade")

// StateFromJSON reads a stored state (the JSON `upgrade-state` is given)
// laid out as schema. JSON cannot tell a list from a set or a map from an
// object; the schema's types do. Whole numbers in the int64 range become
// int64, other numbers float64.
func StateFromJSON(schema *Schema, rawJSON string) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(rawJSON)))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, Errorf("The stored state is not JSON").WithDetail("%v", err)
	}
	v, err := blockFromJSON(&schema.Block, raw, nil)
	if err != nil {
		return nil, err
	}
	obj, _ := v.(Object)
	return obj, nil
}

func jsonMismatch(at Path, expected string) error {
	return Errorf("Stored state does not match the schema").WithDetail("expected %s at %s", expected, at.String()).At(stepsOf(at)...)
}

func stepsOf(p Path) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

func blockFromJSON(b *Block, raw any, at Path) (any, error) {
	if raw == nil {
		return nil, nil
	}
	fields, ok := raw.(map[string]any)
	if !ok {
		return nil, jsonMismatch(at, "an object")
	}
	out := Object{}
	for _, name := range sortedKeys(fields) {
		_, isAttr := b.Attributes[name]
		_, isBlock := b.Blocks[name]
		if !isAttr && !isBlock {
			return nil, Errorf("Stored state does not match the schema").
				WithDetail("`%s` is not an attribute or block of this schema version", name).At(stepsOf(at.then(PathStep{Attribute: name}))...)
		}
	}
	for name, a := range b.Attributes {
		v, err := valueFromJSON(fields[name], a.valueType(), at.then(PathStep{Attribute: name}))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	for name, nb := range b.Blocks {
		v, err := blocksFromJSON(nb, fields[name], at.then(PathStep{Attribute: name}))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func blocksFromJSON(nb NestedBlock, raw any, at Path) (any, error) {
	if raw == nil {
		return nil, nil
	}
	switch nb.Nesting {
	case NestingSingle:
		return blockFromJSON(&nb.Block, raw, at)
	case NestingMap:
		items, ok := raw.(map[string]any)
		if !ok {
			return nil, jsonMismatch(at, "an object of blocks")
		}
		out := Map{}
		for k, item := range items {
			v, err := blockFromJSON(&nb.Block, item, at.then(PathStep{Key: k, IsKey: true}))
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, jsonMismatch(at, "an array of blocks")
	}
	out := make([]any, len(items))
	for i, item := range items {
		v, err := blockFromJSON(&nb.Block, item, at.then(PathStep{Index: uint64(i), IsIndex: true}))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	if nb.Nesting == NestingSet {
		return Set(out), nil
	}
	return out, nil
}

// valueFromJSON reads JSON as a value of type t. Under Dynamic, arrays
// become tuples and objects objects, the most specific reading.
func valueFromJSON(raw any, t Type, at Path) (any, error) {
	if raw == nil {
		return nil, nil
	}
	switch t.Kind {
	case KindBool:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
		return nil, jsonMismatch(at, "a bool")
	case KindString:
		if s, ok := raw.(string); ok {
			return s, nil
		}
		return nil, jsonMismatch(at, "a string")
	case KindNumber:
		if n, ok := raw.(json.Number); ok {
			return numberFromJSON(n, at)
		}
		return nil, jsonMismatch(at, "a number")
	case KindList, KindSet, KindTuple:
		items, ok := raw.([]any)
		if !ok {
			return nil, jsonMismatch(at, "an array")
		}
		out := make([]any, len(items))
		for i, item := range items {
			elem := Dynamic
			switch {
			case t.Kind != KindTuple && t.Elem != nil:
				elem = *t.Elem
			case t.Kind == KindTuple && i < len(t.Elems):
				elem = t.Elems[i]
			}
			v, err := valueFromJSON(item, elem, at.then(PathStep{Index: uint64(i), IsIndex: true}))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		switch t.Kind {
		case KindSet:
			return Set(out), nil
		case KindTuple:
			return Tuple(out), nil
		}
		return out, nil
	case KindMap, KindObject:
		fields, ok := raw.(map[string]any)
		if !ok {
			return nil, jsonMismatch(at, "an object")
		}
		out := make(map[string]any, len(fields))
		for k, item := range fields {
			elem, step := Dynamic, PathStep{Attribute: k}
			if t.Kind == KindMap {
				step = PathStep{Key: k, IsKey: true}
				if t.Elem != nil {
					elem = *t.Elem
				}
			} else if et, ok := t.Attrs[k]; ok {
				elem = et
			}
			v, err := valueFromJSON(item, elem, at.then(step))
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		if t.Kind == KindMap {
			return Map(out), nil
		}
		return Object(out), nil
	}
	// Dynamic: the JSON decides.
	switch x := raw.(type) {
	case []any:
		return valueFromJSON(x, Type{Kind: KindTuple}, at)
	case map[string]any:
		return valueFromJSON(x, Type{Kind: KindObject}, at)
	case json.Number:
		return numberFromJSON(x, at)
	}
	return raw, nil
}

func numberFromJSON(n json.Number, at Path) (any, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, jsonMismatch(at, fmt.Sprintf("a finite number, not %s", n))
	}
	return f, nil
}
