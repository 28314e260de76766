package main

import (
	cairn "cairn.dev/sdk-go"
)

// permissionsType is `rabbitmq_permissions`: what one user may configure,
// write and read in one virtual host. Import id: `user@vhost`.
type permissionsType struct{ vhostObject }

// permissions is rabbitmq_permissions.
var permissions = permissionsType{vhostObject{
	typeName: "rabbitmq_permissions", collection: "permissions", nameAttr: "user", block: "permissions",
	readBlock: readPermissions,
}}

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

// write sets the permissions planned describes.
func (t permissionsType) write(c *Client, planned cairn.Object) (cairn.Object, error) {
	perms, _ := planned.Object("permissions")
	body := permissionsAPI{}
	body.Configure, _ = perms.String("configure")
	body.Write, _ = perms.String("write")
	body.Read, _ = perms.String("read")
	return t.put(c, planned, body)
}

func (t permissionsType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	return t.write(c, planned)
}

func (t permissionsType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	return t.write(c, planned)
}

// readPermissions reads the permissions at apiPath as their
// `permissions` block.
func readPermissions(c *Client, apiPath string) (cairn.Object, error) {
	var p permissionsAPI
	if err := c.get(apiPath, &p); err != nil {
		return nil, err
	}
	return cairn.Object{"configure": p.Configure, "write": p.Write, "read": p.Read}, nil
}
