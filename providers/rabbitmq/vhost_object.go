package main

import (
	cairn "cairn.dev/sdk-go"
)

// vhostObject is what the types whose objects live in a virtual host and
// are identified `NAME@VHOST` share (exchanges, queues, permissions and
// policies): where the API keeps an object, and how it is written,
// removed, read back and imported. Each type embeds one and keeps its own
// schema, plan and request body.
type vhostObject struct {
	// typeName names the type in an import id's error: `rabbitmq_queue`.
	typeName string
	// collection is the API's path segment: `queues` in /api/queues/VHOST/NAME.
	collection string
	// nameAttr is the attribute holding the name: `name`, or `user` for
	// permissions.
	nameAttr string
	// block is the single nested block holding the rest: `settings`.
	block string
	// readBlock GETs the object at apiPath and returns block's value as
	// configuration writes it.
	readBlock func(c *Client, apiPath string) (cairn.Object, error)
}

// key is the name and virtual host of the object o describes.
func (t vhostObject) key(o cairn.Object) (name, vhost string) {
	name, _ = o.String(t.nameAttr)
	vhost, _ = o.String("vhost")
	return name, vhost
}

// apiPath is where the API keeps the object name@vhost.
func (t vhostObject) apiPath(name, vhost string) string {
	return path(t.collection, vhost, name)
}

// put writes body as the object planned describes and returns its state:
// planned with its id.
func (t vhostObject) put(c *Client, planned cairn.Object, body any) (cairn.Object, error) {
	name, vhost := t.key(planned)
	if err := c.put(t.apiPath(name, vhost), body); err != nil {
		return nil, err
	}
	state := planned.Clone()
	state["id"] = joinID(name, vhost)
	return state, nil
}

// remove, read and importState are the embedding type's resourceType
// methods of the same names.
func (t vhostObject) remove(c *Client, state cairn.Object) error {
	name, vhost := t.key(state)
	return c.remove(t.apiPath(name, vhost))
}

func (t vhostObject) read(c *Client, state cairn.Object) (cairn.Object, error) {
	name, vhost := t.key(state)
	return t.fetch(c, name, vhost)
}

func (t vhostObject) importState(c *Client, id string) (cairn.Object, error) {
	name, vhost, err := splitID(id, t.typeName)
	if err != nil {
		return nil, err
	}
	return t.fetch(c, name, vhost)
}

// fetch is the state of the object name@vhost as the server has it now, or
// nil when it does not exist.
func (t vhostObject) fetch(c *Client, name, vhost string) (cairn.Object, error) {
	block, err := t.readBlock(c, t.apiPath(name, vhost))
	if err != nil {
		return notFound(err)
	}
	return cairn.Object{"id": joinID(name, vhost), t.nameAttr: name, "vhost": vhost, t.block: block}, nil
}
