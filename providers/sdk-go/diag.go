package cairn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PathStep is one step of an attribute path: an attribute (or nested block
// type) by name, a map element by key, or a list element by position.
type PathStep struct {
	// Attribute is the name, when the step is neither a key nor an index.
	Attribute string
	// Key is the map key, when IsKey.
	Key   string
	IsKey bool
	// Index is the position, when IsIndex.
	Index   uint64
	IsIndex bool
}

// Path is a path from the root of a value to one of its parts, such as
// `.rule[0].port`: At("rule", 0, "port").
type Path []PathStep

// At builds a path from steps: a string is an attribute name, an int an
// index, a Key a map key. At() is the whole object.
func At(steps ...any) Path {
	p := make(Path, 0, len(steps))
	for _, s := range steps {
		switch x := s.(type) {
		case string:
			p = append(p, PathStep{Attribute: x})
		case Key:
			p = append(p, PathStep{Key: string(x), IsKey: true})
		case int:
			p = append(p, PathStep{Index: uint64(x), IsIndex: true})
		case uint64:
			p = append(p, PathStep{Index: x, IsIndex: true})
		case PathStep:
			p = append(p, x)
		default:
			// A programming error in the provider: keep the step visible
			// rather than drop it.
			p = append(p, PathStep{Attribute: fmt.Sprintf("%v", s)})
		}
	}
	return p
}

// then returns a new path: p followed by step (p itself is not changed).
func (p Path) then(step PathStep) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, step)
}

// String renders the path as the host does: `.rule[0].tags["k"]`.
func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.IsKey:
			b.WriteString("[" + strconv.Quote(s.Key) + "]")
		case s.IsIndex:
			b.WriteString("[" + strconv.FormatUint(s.Index, 10) + "]")
		default:
			b.WriteString("." + s.Attribute)
		}
	}
	return b.String()
}

// Severity says how serious a diagnostic is.
type Severity int

const (
	// SeverityError: the operation failed.
	SeverityError Severity = iota
	// SeverityWarning: the operation went ahead; the user should know.
	SeverityWarning
)

// Diagnostic is a message for the user about an operation. It is an error:
// return it (or Diagnostics) from any Provider method to fail the call with
// it.
type Diagnostic struct {
	Severity Severity
	// Summary is one line.
	Summary string
	// Detail is any length; may be empty.
	Detail string
	// Path is the attribute the message is about; empty for the whole
	// object.
	Path Path
}

// Errorf is an error diagnostic whose summary is formatted like fmt.Sprintf.
// Chain WithDetail and At to say more:
//
//	return nil, cairn.Errorf("Cannot create queue %q", name).WithDetail(err.Error()).At("name")
func Errorf(format string, args ...any) *Diagnostic {
	return &Diagnostic{Severity: SeverityError, Summary: fmt.Sprintf(format, args...)}
}

// Warningf is a warning diagnostic, for a response's Diagnostics.
func Warningf(format string, args ...any) *Diagnostic {
	return &Diagnostic{Severity: SeverityWarning, Summary: fmt.Sprintf(format, args...)}
}

// WithDetail sets the detail and returns d.
func (d *Diagnostic) WithDetail(format string, args ...any) *Diagnostic {
	d.Detail = fmt.Sprintf(format, args...)
	return d
}

// At sets the attribute path (see the function At for the steps) and
// returns d.
func (d *Diagnostic) At(steps ...any) *Diagnostic {
	d.Path = At(steps...)
	return d
}

// Error makes a Diagnostic an error: its summary, path and detail.
func (d *Diagnostic) Error() string {
	s := d.Summary
	if len(d.Path) > 0 {
		s += " (at " + d.Path.String() + ")"
	}
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	return s
}

// Diagnostics is several diagnostics; as an error it fails the call with
// all of them (warnings included).
type Diagnostics []*Diagnostic

// Error joins the diagnostics' messages.
func (ds Diagnostics) Error() string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Error()
	}
	return strings.Join(parts, "; ")
}

// HasErrors reports whether any of the diagnostics is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// diagnosticsOf turns an error returned by a provider into diagnostics: a
// *Diagnostic or Diagnostics (also wrapped, as errors.As finds them) as
// they are, any other error as one error diagnostic with its message.
func diagnosticsOf(err error) Diagnostics {
	if err == nil {
		return nil
	}
	var ds Diagnostics
	if errors.As(err, &ds) {
		return ds
	}
	var d *Diagnostic
	if errors.As(err, &d) {
		return Diagnostics{d}
	}
	return Diagnostics{{Severity: SeverityError, Summary: err.Error()}}
}
