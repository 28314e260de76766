package cairn

import (
	"fmt"
	"math"
	"reflect"
	"sort"
)

// Values are ordinary Go values:
//
//	wire node       Go value
//	---------       --------
//	null            nil
//	unknown         Unknown (with its refinements)
//	boolean         bool
//	integer/float   int64 / float64 (encoding also takes the other int and float kinds)
//	text            string
//	list            []any
//	set             Set
//	map             Map
//	object          Object (encoding also takes map[string]any)
//	tuple           Tuple
//	sensitive mark  Sensitive{Value: v}
//
// A decoded value keeps no sensitive marks (the host keeps them, and
// attributes the schema declares sensitive are marked again on the way
// out); wrap a value in Sensitive to mark one the schema cannot know is
// secret.

// Object is an object value: named attributes, each of its own type. Every
// state and configuration a provider is handed is an Object (nil when null).
type Object map[string]any

// Map is a map value: string keys to elements of one type.
type Map map[string]any

// Set is a set value: its order carries no meaning (Equal compares sets
// unordered).
type Set []any

// Tuple is a tuple value: a fixed-length sequence, each element of its own
// type.
type Tuple []any

// Sensitive marks Value, and everything inside it, secret: the host redacts
// it wherever it shows it.
type Sensitive struct {
	Value any
}

// Unknown is a value that only apply can tell. The refinements say what is
// already known about it; the host holds the final value to them. The zero
// Unknown{} is a plain unknown.
type Unknown struct {
	// NotNull: the value will not be null.
	NotNull bool
	// Prefix: a string that will start with *Prefix (implies NotNull).
	Prefix *string
	// Lower and Upper: a number within these bounds.
	Lower, Upper *Bound
	// MinLength and MaxLength: a list, set or map with this many elements.
	MinLength, MaxLength *uint64
}

// Bound is one end of a range of numbers: int64 or float64.
type Bound struct {
	Value     any
	Inclusive bool
}

// Key is a map key in a Path (a string step is an attribute name).
type Key string

// Unwrap returns v without its Sensitive mark, if it has one.
func Unwrap(v any) any {
	if s, ok := v.(Sensitive); ok {
		return Unwrap(s.Value)
	}
	return v
}

// IsUnknown reports whether v (under any Sensitive mark) is unknown as a
// whole.
func IsUnknown(v any) bool {
	_, ok := Unwrap(v).(Unknown)
	return ok
}

// IsKnown reports whether nothing inside v is unknown.
func IsKnown(v any) bool {
	_, found := FindUnknown(v)
	return !found
}

// FindUnknown returns the path of the first unknown inside v, and whether
// there is one.
func FindUnknown(v any) (Path, bool) {
	return findUnknown(v, nil)
}

func findUnknown(v any, at Path) (Path, bool) {
	switch x := Unwrap(v).(type) {
	case Unknown:
		return at, true
	case Object:
		return findUnknownIn(map[string]any(x), at, false)
	case map[string]any:
		return findUnknownIn(x, at, false)
	case Map:
		return findUnknownIn(map[string]any(x), at, true)
	case []any:
		return findUnknownInList(x, at)
	case Set:
		return findUnknownInList(x, at)
	case Tuple:
		return findUnknownInList(x, at)
	}
	return nil, false
}

func findUnknownIn(m map[string]any, at Path, keyed bool) (Path, bool) {
	for _, k := range sortedKeys(m) {
		step := PathStep{Attribute: k}
		if keyed {
			step = PathStep{Key: k, IsKey: true}
		}
		if p, ok := findUnknown(m[k], at.then(step)); ok {
			return p, true
		}
	}
	return nil, false
}

func findUnknownInList(xs []any, at Path) (Path, bool) {
	for i, x := range xs {
		if p, ok := findUnknown(x, at.then(PathStep{Index: uint64(i), IsIndex: true})); ok {
			return p, true
		}
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Equal reports whether a and b are the same value: numbers compare by
// value (int64(3) equals 3.0), sets unordered, Object and map[string]any
// alike; Sensitive marks are ignored.
func Equal(a, b any) bool {
	a, b = normalize(Unwrap(a)), normalize(Unwrap(b))
	switch x := a.(type) {
	case nil:
		return b == nil
	case Unknown:
		y, ok := b.(Unknown)
		return ok && reflect.DeepEqual(x, y)
	case bool, string:
		return a == b
	case int64, float64:
		return numbersEqual(a, b)
	case Object:
		y, ok := b.(Object)
		return ok && mapsEqual(x, y)
	case Map:
		y, ok := b.(Map)
		return ok && mapsEqual(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && listsEqual(x, y)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && listsEqual(x, y)
	case Set:
		y, ok := b.(Set)
		return ok && setsEqual(x, y)
	}
	return reflect.DeepEqual(a, b)
}

// normalize turns the Go kinds encoding accepts into the ones decoding
// gives (int64, float64, Object), so that Equal compares like with like.
func normalize(v any) any {
	if m, ok := v.(map[string]any); ok {
		return Object(m)
	}
	if n, ok := toNumber(v); ok {
		return n
	}
	return v
}

func numbersEqual(a, b any) bool {
	if b == nil {
		return false
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y && y == math.Trunc(y) && int64(y) == x
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case int64:
			return numbersEqual(y, x)
		}
	}
	return false
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !Equal(x, y) {
			return false
		}
	}
	return true
}

func listsEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func setsEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && Equal(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// toNumber returns v as int64 or float64 when it is any Go number kind.
// Whole floats stay float64 here; encoding sends them as integers.
func toNumber(v any) (any, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return uintNumber(uint64(n)), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return uintNumber(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return nil, false
}

func uintNumber(n uint64) any {
	if n <= math.MaxInt64 {
		return int64(n)
	}
	return float64(n)
}

// Clone returns a deep copy of v, so that changing the copy (a planned
// state built from the prior state, say) leaves v alone.
func Clone(v any) any {
	switch x := v.(type) {
	case Object:
		return Object(cloneMap(x))
	case map[string]any:
		return Object(cloneMap(x))
	case Map:
		return Map(cloneMap(x))
	case []any:
		return cloneList(x)
	case Set:
		return Set(cloneList(x))
	case Tuple:
		return Tuple(cloneList(x))
	case Sensitive:
		return Sensitive{Value: Clone(x.Value)}
	}
	return v
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = Clone(x)
	}
	return out
}

func cloneList(xs []any) []any {
	if xs == nil {
		return nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = Clone(x)
	}
	return out
}

// Clone returns a deep copy of the object.
func (o Object) Clone() Object {
	if o == nil {
		return nil
	}
	return Object(cloneMap(o))
}

// Get returns attribute name's value without its Sensitive mark (nil when
// null or absent).
func (o Object) Get(name string) any {
	return Unwrap(o[name])
}

// IsNull reports whether attribute name is null (or absent).
func (o Object) IsNull(name string) bool {
	return o.Get(name) == nil
}

// IsUnknown reports whether attribute name is unknown as a whole.
func (o Object) IsUnknown(name string) bool {
	return IsUnknown(o[name])
}

// String returns attribute name as a string; ok is false when it is null,
// unknown or not a string.
func (o Object) String(name string) (s string, ok bool) {
	s, ok = o.Get(name).(string)
	return s, ok
}

// Bool returns attribute name as a bool; ok is false when it is null,
// unknown or not a bool.
func (o Object) Bool(name string) (b bool, ok bool) {
	b, ok = o.Get(name).(bool)
	return b, ok
}

// Int returns attribute name as an int64; ok is false when it is null,
// unknown, or not a whole number in the int64 range.
func (o Object) Int(name string) (int64, bool) {
	switch n := o.Get(name).(type) {
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true
		}
	default:
		if x, ok := toNumber(n); ok {
			if i, ok := x.(int64); ok {
				return i, true
			}
		}
	}
	return 0, false
}

// Float returns attribute name as a float64; ok is false when it is null,
// unknown or not a number.
func (o Object) Float(name string) (float64, bool) {
	switch n := o.Get(name).(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// Object returns attribute name as an Object (a nested single block or
// object attribute); ok is false when it is null, unknown or not an object.
func (o Object) Object(name string) (Object, bool) {
	switch x := o.Get(name).(type) {
	case Object:
		return x, true
	case map[string]any:
		return Object(x), true
	}
	return nil, false
}

// List returns attribute name's elements when it is a list, set or tuple;
// ok is false when it is null, unknown or none of those.
func (o Object) List(name string) ([]any, bool) {
	switch x := o.Get(name).(type) {
	case []any:
		return x, true
	case Set:
		return x, true
	case Tuple:
		return x, true
	}
	return nil, false
}

// Map returns attribute name's entries when it is a map or an object; ok
// is false when it is null, unknown or neither.
func (o Object) Map(name string) (map[string]any, bool) {
	switch x := o.Get(name).(type) {
	case Map:
		return x, true
	case Object:
		return x, true
	case map[string]any:
		return x, true
	}
	return nil, false
}

// Strings returns attribute name's elements as strings when it is a list,
// set or tuple of known strings; ok is false otherwise.
func (o Object) Strings(name string) ([]string, bool) {
	xs, ok := o.List(name)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		s, ok := Unwrap(x).(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// StringMap returns attribute name's entries as strings when it is a map
// (or object) of known strings; ok is false otherwise.
func (o Object) StringMap(name string) (map[string]string, bool) {
	m, ok := o.Map(name)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := Unwrap(x).(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// describe names the Go type of a value that has no cairn value, for an
// error message.
func describe(v any) string {
	return fmt.Sprintf("%T", v)
}
