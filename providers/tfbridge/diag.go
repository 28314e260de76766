package tfbridge

// Diagnostics and attribute paths: tfprotov6's in cairn's form.

import (
	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func diagnostics(ds []*tfprotov6.Diagnostic) cairn.Diagnostics {
	var out cairn.Diagnostics
	for _, d := range ds {
		if d == nil {
			continue
		}
		severity := cairn.SeverityError
		if d.Severity == tfprotov6.DiagnosticSeverityWarning {
			severity = cairn.SeverityWarning
		}
		out = append(out, &cairn.Diagnostic{Severity: severity, Summary: d.Summary, Detail: d.Detail, Path: pathOf(d.Attribute)})
	}
	return out
}

// pathOf is an attribute path in cairn's form. cairn's paths cannot name
// a set element (a set's elements have no key or position), so a path
// into a set stops at the set: a requires-replace path then replaces on
// any change of the set, which is what a change inside one element is.
func pathOf(p *tftypes.AttributePath) cairn.Path {
	var out cairn.Path
	if p == nil {
		return out
	}
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			out = append(out, cairn.PathStep{Attribute: string(s)})
		case tftypes.ElementKeyString:
			out = append(out, cairn.PathStep{Key: string(s), IsKey: true})
		case tftypes.ElementKeyInt:
			if s < 0 {
				return out
			}
			out = append(out, cairn.PathStep{Index: uint64(s), IsIndex: true})
		default:
			return out
		}
	}
	return out
}
