// Package sdkv2 serves a terraform-plugin-sdk/v2 provider as a cairn
// provider component through the bridge (cairn.dev/tfbridge): its
// protocol 5 server, upgraded to protocol 6, with its legacy type system
// answers normalised, and the attributes its schema gives a Default or a
// DefaultFunc declared optional and computed (the provider fills them
// in; see tfbridge.Defaults).
//
// It is a module of its own so that framework providers, which use only
// the bridge, do not build SDKv2.
package sdkv2

import (
	"sort"

	"cairn.dev/tfbridge"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
)

// Serve makes p the component's provider. Call it once, from an init
// function of package main:
//
//	func init() { sdkv2.Serve(provider.New()) }
func Serve(p *schema.Provider) {
	tfbridge.ServeV5WithDefaults(p.GRPCProvider, DefaultsOf(p))
}

// DefaultsOf is the attributes of p's resource types that have a Default
// or a DefaultFunc and are not computed, in blocks too.
func DefaultsOf(p *schema.Provider) tfbridge.Defaults {
	out := tfbridge.Defaults{}
	for name, r := range p.ResourcesMap {
		if paths := defaulted(r.SchemaMap(), nil); len(paths) > 0 {
			out[name] = paths
		}
	}
	return out
}

// defaulted is the paths, under prefix, of the defaulted attributes in m.
func defaulted(m map[string]*schema.Schema, prefix []string) [][]string {
	var paths [][]string
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := m[name]
		path := append(append([]string{}, prefix...), name)
		if block, ok := s.Elem.(*schema.Resource); ok && (s.Type == schema.TypeList || s.Type == schema.TypeSet) {
			paths = append(paths, defaulted(block.SchemaMap(), path)...)
			continue
		}
		if (s.Default != nil || s.DefaultFunc != nil) && s.Optional && !s.Computed {
			paths = append(paths, path)
		}
	}
	return paths
}
