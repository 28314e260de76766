package main

import (
	cairn "cairn.dev/sdk-go"
)

// vhostType is `rabbitmq_vhost`: a virtual host. Import id: its name.
type vhostType struct{}

func (vhostType) schema() cairn.Schema {
	return cairn.Schema{Block: cairn.Block{
		Description: "A RabbitMQ virtual host.",
		Attributes: map[string]cairn.Attr{
			"id":          idAttr,
			"name":        {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The virtual host's name."},
			"description": {Type: cairn.String, Optional: true, Computed: true, Default: "", Description: "A description; empty when unset."},
			"tracing":     {Type: cairn.Bool, Optional: true, Computed: true, Default: false, Description: "Whether message tracing is on; false when unset."},
		},
	}}
}

// vhostAPI is a virtual host as the API reads and writes it.
type vhostAPI struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
	Tracing     bool   `json:"tracing"`
}

func (vhostType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	planID(resp, func(p []string) string { return p[0] }, "name")
	return nil
}

func (vhostType) put(c *Client, planned cairn.Object) (cairn.Object, error) {
	name, _ := planned.String("name")
	description, _ := planned.String("description")
	tracing, _ := planned.Bool("tracing")
	if err := c.put(path("vhosts", name), vhostAPI{Description: description, Tracing: tracing}); err != nil {
		return nil, err
	}
	state := planned.Clone()
	state["id"] = name
	return state, nil
}

func (t vhostType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (t vhostType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (vhostType) remove(c *Client, state cairn.Object) error {
	name, _ := state.String("name")
	return c.remove(path("vhosts", name))
}

func (t vhostType) read(c *Client, state cairn.Object) (cairn.Object, error) {
	name, _ := state.String("name")
	return t.importState(c, name)
}

func (vhostType) importState(c *Client, name string) (cairn.Object, error) {
	var v vhostAPI
	if err := c.get(path("vhosts", name), &v); err != nil {
		return notFound(err)
	}
	return cairn.Object{"id": v.Name, "name": v.Name, "description": v.Description, "tracing": v.Tracing}, nil
}
