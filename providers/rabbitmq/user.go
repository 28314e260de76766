package main

import (
	"strings"

	cairn "cairn.dev/sdk-go"
)

// userType is `rabbitmq_user`: a user, its password and its tags. Import
// id: its name.
//
// The password is sensitive. RabbitMQ never returns it, only its salted
// hash: a refresh checks the stored password against that hash, so a
// password changed behind cairn's back is planned back.
type userType struct{}

func (userType) schema() cairn.Schema {
	return cairn.Schema{Block: cairn.Block{
		Description: "A RabbitMQ user.",
		Attributes: map[string]cairn.Attr{
			"id":       idAttr,
			"name":     {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The user's name."},
			"password": {Type: cairn.String, Required: true, Sensitive: true, Description: "The user's password."},
			"tags": {
				Type: cairn.ListOf(cairn.String), Optional: true, Computed: true, Default: []any{},
				Description: "The user's tags (`administrator`, `management`, `monitoring`…); none when unset.",
			},
		},
	}}
}

// userAPI is a user as the API reads it.
type userAPI struct {
	Name             string   `json:"name"`
	PasswordHash     string   `json:"password_hash"`
	HashingAlgorithm string   `json:"hashing_algorithm"`
	Tags             []string `json:"tags"`
}

// userPut is a user as the API writes it: tags comma-separated.
type userPut struct {
	Password string `json:"password"`
	Tags     string `json:"tags"`
}

func (userType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	planID(resp, func(p []string) string { return p[0] }, "name")
	return nil
}

func (userType) put(c *Client, planned cairn.Object) (cairn.Object, error) {
	name, _ := planned.String("name")
	password, _ := planned.String("password")
	tags, _ := planned.Strings("tags")
	if err := c.put(path("users", name), userPut{Password: password, Tags: strings.Join(tags, ",")}); err != nil {
		return nil, err
	}
	state := planned.Clone()
	state["id"] = name
	return state, nil
}

func (t userType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (t userType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	return t.put(c, planned)
}

func (userType) remove(c *Client, state cairn.Object) error {
	name, _ := state.String("name")
	return c.remove(path("users", name))
}

func (userType) fetch(c *Client, name string) (*userAPI, error) {
	var u userAPI
	if err := c.get(path("users", name), &u); err != nil {
		return nil, err
	}
	return &u, nil
}

func (t userType) read(c *Client, state cairn.Object) (cairn.Object, error) {
	name, _ := state.String("name")
	u, err := t.fetch(c, name)
	if err != nil {
		return notFound(err)
	}
	// The stored password stays unless the server's hash says it is no
	// longer the user's: then it reads as empty, which differs from the
	// configuration, so the next plan sets it again.
	password := state.Get("password")
	if s, ok := password.(string); ok {
		if matches, known := passwordMatches(u.HashingAlgorithm, u.PasswordHash, s); known && !matches {
			password = ""
		}
	}
	return cairn.Object{"id": u.Name, "name": u.Name, "password": password, "tags": stringList(u.Tags)}, nil
}

func (t userType) importState(c *Client, name string) (cairn.Object, error) {
	u, err := t.fetch(c, name)
	if err != nil {
		return notFound(err)
	}
	// The password cannot be read back: null until the first apply sets
	// the configured one.
	return cairn.Object{"id": u.Name, "name": u.Name, "password": nil, "tags": stringList(u.Tags)}, nil
}
