package main

import (
	cairn "cairn.dev/sdk-go"
)

// permissionsType is `rabbitmq_permissions`: what one user may configure,
// write and read in one virtual host. Import id: `user@vhost`.
type permissionsType struct{}

func (permissionsType) schema() cairn.Schema {
	regexp := func(what string) cairn.Attr {
		return cairn.Attr{Type: cairn.String, Required: true, Description: "A regular expression of the resources the user may " + what + "; empty for none."}
	}
	return cairn.Schema{Block: cairn.Block{
		Description: "A user's permissions in a virtual host.",
		Attributes: map[string]cairn.Attr{
			"id":    idAttr,
			"user":  {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The user."},
			"vhost": vhostAttr,
		},
		Blocks: map[string]cairn.NestedBlock{
			"permissions": {Nesting: cairn.NestingSingle, MinItems: 1, MaxItems: 1, Block: cairn.Block{
				Description: "The permissions, each a regular expression of resource names.",
				Attributes: map[string]cairn.Attr{
					"configure": regexp("configure"),
					"write":     regexp("write"),
					"read":      regexp("read"),
				},
			}},
		},
	}}
}

// permissionsAPI is a user's permissions as the API reads and writes them.
type permissionsAPI struct {
	User      string `json:"user,omitempty"`
	Vhost     string `json:"vhost,omitempty"`
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

func (permissionsType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	planID(resp, nameAtVhostID, "user", "vhost")
	return nil
}

func (permissionsType) put(c *Client, planned cairn.Object) (cairn.Object, error) {
	user, _ := planned.String("user")
	vhost, _ := planned.String("vhost")
	perms, _ := planned.Object("permissions")
	body := permissionsAPI{}
	body.Configure, _ = perms.String("configure")
	body.Write, _ = perms.String("write")
	body.Read, _ = perms.String("read")
	if err := c.put(path("permissions", vhost, user), body); err != nil {
		return nil, err
	}
	state := planned.Clone()
	state["id"] = joinID(user, vhost)
	return state, nil
}

func (t permissionsType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (t permissionsType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (permissionsType) remove(c *Client, state cairn.Object) error {
	user, _ := state.String("user")
	vhost, _ := state.String("vhost")
	return c.remove(path("permissions", vhost, user))
}

func (t permissionsType) read(c *Client, state cairn.Object) (cairn.Object, error) {
	user, _ := state.String("user")
	vhost, _ := state.String("vhost")
	return t.fetch(c, user, vhost)
}

func (t permissionsType) importState(c *Client, id string) (cairn.Object, error) {
	user, vhost, err := splitID(id, "rabbitmq_permissions")
	if err != nil {
		return nil, err
	}
	return t.fetch(c, user, vhost)
}

func (permissionsType) fetch(c *Client, user, vhost string) (cairn.Object, error) {
	var p permissionsAPI
	if err := c.get(path("permissions", vhost, user), &p); err != nil {
		return notFound(err)
	}
	return cairn.Object{
		"id":          joinID(user, vhost),
		"user":        user,
		"vhost":       vhost,
		"permissions": cairn.Object{"configure": p.Configure, "write": p.Write, "read": p.Read},
	}, nil
}
