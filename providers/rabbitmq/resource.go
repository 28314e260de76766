package main

import (
	"errors"

	cairn "cairn.dev/sdk-go"
)

// resourceType is one of the provider's resource types: its schema, how it
// plans, and how it makes, changes, reads and removes its objects through
// the management API.
type resourceType interface {
	// schema is the type's schema.
	schema() cairn.Schema
	// plan fills in what the default plan (defaults of top-level
	// attributes, RequiresReplace) leaves: nested defaults, the id, and
	// the nested paths whose change replaces the object.
	plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error
	// create makes the object of planned and returns its state.
	create(c *Client, planned cairn.Object) (cairn.Object, error)
	// update changes the object of prior into planned in place and returns
	// its state (only called for changes that need no replacement).
	update(c *Client, prior, planned cairn.Object) (cairn.Object, error)
	// remove deletes the object of state; one already gone is success.
	remove(c *Client, state cairn.Object) error
	// read returns the object of state as the server has it now, or nil
	// when it no longer exists.
	read(c *Client, state cairn.Object) (cairn.Object, error)
	// importState returns the state of the existing object id names, or
	// nil when there is none.
	importState(c *Client, id string) (cairn.Object, error)
}

// resourceTypes are the provider's resource types, by name.
var resourceTypes = map[string]resourceType{
	"rabbitmq_vhost":       vhostType{},
	"rabbitmq_user":        userType{},
	"rabbitmq_permissions": permissions,
	"rabbitmq_exchange":    exchanges,
	"rabbitmq_queue":       queues,
	"rabbitmq_binding":     bindingType{},
	"rabbitmq_policy":      policies,
}

// idAttr is the `id` every resource type has.
var idAttr = cairn.Attr{Type: cairn.String, Computed: true, Description: "The object's id, as `terraform import` takes it."}

// vhostAttr is the `vhost` of a type whose objects live in a virtual host,
// `/` when unset.
var vhostAttr = cairn.Attr{
	Type: cairn.String, Optional: true, Computed: true, Default: "/", RequiresReplace: true,
	Description: "The virtual host; `/` when unset.",
}

// nestedDefaults sets, in the planned single nested block `block`, each
// attribute the configuration leaves null to its default.
func nestedDefaults(req *cairn.PlanRequest, resp *cairn.PlanResponse, block string, defaults map[string]any) {
	planned, ok := resp.PlannedState.Object(block)
	if !ok {
		return
	}
	config, _ := req.Config.Object(block)
	for name, value := range defaults {
		if config.IsNull(name) {
			planned[name] = value
		}
	}
	resp.PlannedState[block] = planned
}

// knownStrings returns the named attributes of o as strings, and false
// when any of them is not a known string yet.
func knownStrings(o cairn.Object, names ...string) ([]string, bool) {
	out := make([]string, len(names))
	for i, name := range names {
		s, ok := o.String(name)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// planID plans `id` as make(the named attributes) when they are all known,
// else unknown.
func planID(resp *cairn.PlanResponse, make func(parts []string) string, names ...string) {
	if parts, ok := knownStrings(resp.PlannedState, names...); ok {
		resp.Set("id", make(parts))
	} else {
		resp.Set("id", cairn.Unknown{NotNull: true})
	}
}

// nameAtVhostID is planID's maker for `name@vhost` ids.
func nameAtVhostID(parts []string) string { return joinID(parts[0], parts[1]) }

// notFound is what a read answers for err: no object (nil, nil) when the
// server said 404, else the error.
func notFound(err error) (cairn.Object, error) {
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	return nil, err
}
