package main

import (
	"fmt"
	"net/url"
	"strings"

	cairn "cairn.dev/sdk-go"
)

// bindingType is `rabbitmq_binding`: a binding from an exchange to a
// queue or to another exchange. A binding cannot change, so any change of
// it replaces it.
//
// Import id, as the community provider takes it:
// `VHOST/SOURCE/DESTINATION/DESTINATION_TYPE/PROPERTIES_KEY`, with a `/`
// inside the virtual host written `%2F` (`%2F/orders/audit/queue/created`).
type bindingType struct{}

func (bindingType) schema() cairn.Schema {
	replaced := func(a cairn.Attr) cairn.Attr { a.RequiresReplace = true; return a }
	return cairn.Schema{Block: cairn.Block{
		Description: "A binding from an exchange to a queue or an exchange.",
		Attributes: map[string]cairn.Attr{
			"id":               idAttr,
			"vhost":            replaced(cairn.Attr{Type: cairn.String, Required: true, Description: "The virtual host."}),
			"source":           replaced(cairn.Attr{Type: cairn.String, Required: true, Description: "The exchange messages come from."}),
			"destination":      replaced(cairn.Attr{Type: cairn.String, Required: true, Description: "The queue or exchange messages go to."}),
			"destination_type": replaced(cairn.Attr{Type: cairn.String, Required: true, Description: "`queue` or `exchange`."}),
			"routing_key": replaced(cairn.Attr{
				Type: cairn.String, Optional: true, Computed: true, Default: "",
				Description: "The routing key (a pattern for topic exchanges); empty when unset.",
			}),
			"arguments": replaced(cairn.Attr{
				Type: cairn.MapOf(cairn.String), Optional: true, Computed: true, Default: cairn.Map{},
				Description: "Binding arguments (`x-match`… for headers exchanges); none when unset.",
			}),
			"properties_key": {Type: cairn.String, Computed: true, Description: "The key RabbitMQ names the binding by among those between the same two ends."},
		},
	}}
}

// bindingAPI is a binding as the API reads and writes it.
type bindingAPI struct {
	RoutingKey    string         `json:"routing_key"`
	Arguments     map[string]any `json:"arguments"`
	PropertiesKey string         `json:"properties_key,omitempty"`
}

// bindingEnds are a binding's virtual host, ends and kind of destination.
type bindingEnds struct {
	vhost, source, destination, destinationType string
}

func endsOf(o cairn.Object) bindingEnds {
	var e bindingEnds
	e.vhost, _ = o.String("vhost")
	e.source, _ = o.String("source")
	e.destination, _ = o.String("destination")
	e.destinationType, _ = o.String("destination_type")
	return e
}

// apiPath is `/api/bindings/VHOST/e/SOURCE/q|e/DESTINATION`, followed by
// the properties key when there is one.
func (e bindingEnds) apiPath(propertiesKey string) string {
	kind := "q"
	if e.destinationType == "exchange" {
		kind = "e"
	}
	p := path("bindings", e.vhost, "e", e.source, kind, e.destination)
	if propertiesKey != "" {
		p += "/" + url.PathEscape(propertiesKey)
	}
	return p
}

// id is the community provider's binding id.
func (e bindingEnds) id(propertiesKey string) string {
	return strings.Join([]string{strings.ReplaceAll(e.vhost, "/", "%2F"), e.source, e.destination, e.destinationType, propertiesKey}, "/")
}

// validateBinding checks what the schema cannot: the kind of destination.
func validateBinding(config cairn.Object) error {
	if t, ok := config.String("destination_type"); ok && t != "queue" && t != "exchange" {
		return cairn.Errorf("destination_type must be \"queue\" or \"exchange\", not %q", t).At("destination_type")
	}
	return nil
}

func (bindingType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	// The properties key and the id are the server's to give: the default
	// plan leaves them unknown on create and replace, and keeps the prior
	// ones otherwise.
	return nil
}

func (bindingType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	ends := endsOf(planned)
	routingKey, _ := planned.String("routing_key")
	args, err := argumentsToAPI(stringMap(planned, "arguments"), cairn.At("arguments"))
	if err != nil {
		return nil, err
	}
	header, err := c.do("POST", ends.apiPath(""), bindingAPI{RoutingKey: routingKey, Arguments: args}, nil)
	if err != nil {
		return nil, err
	}
	// The answer's Location ends with the new binding's properties key,
	// percent-encoded.
	location := header.Get("Location")
	key, err := url.PathUnescape(location[strings.LastIndex(location, "/")+1:])
	if err != nil || location == "" {
		return nil, fmt.Errorf("RabbitMQ created the binding %s but named it with an unreadable Location %q", ends.apiPath(""), location)
	}
	state := planned.Clone()
	state["properties_key"] = key
	state["id"] = ends.id(key)
	return state, nil
}

func (bindingType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	// Every configurable attribute replaces the binding.
	return planned, nil
}

func (bindingType) remove(c *Client, state cairn.Object) error {
	key, _ := state.String("properties_key")
	return c.remove(endsOf(state).apiPath(key))
}

func (t bindingType) read(c *Client, state cairn.Object) (cairn.Object, error) {
	key, _ := state.String("properties_key")
	return t.fetch(c, endsOf(state), key)
}

func (t bindingType) importState(c *Client, id string) (cairn.Object, error) {
	parts := strings.Split(id, "/")
	if len(parts) != 5 || parts[1] == "" || parts[2] == "" || (parts[3] != "queue" && parts[3] != "exchange") || parts[4] == "" {
		return nil, fmt.Errorf("%q is not a rabbitmq_binding id: write it VHOST/SOURCE/DESTINATION/queue|exchange/PROPERTIES_KEY, "+
			"with a / in the virtual host written %%2F (%%2F/orders/audit/queue/created)", id)
	}
	ends := bindingEnds{vhost: strings.ReplaceAll(parts[0], "%2F", "/"), source: parts[1], destination: parts[2], destinationType: parts[3]}
	return t.fetch(c, ends, parts[4])
}

func (bindingType) fetch(c *Client, ends bindingEnds, propertiesKey string) (cairn.Object, error) {
	var b bindingAPI
	if err := c.get(ends.apiPath(propertiesKey), &b); err != nil {
		return notFound(err)
	}
	return cairn.Object{
		"id":               ends.id(b.PropertiesKey),
		"vhost":            ends.vhost,
		"source":           ends.source,
		"destination":      ends.destination,
		"destination_type": ends.destinationType,
		"routing_key":      b.RoutingKey,
		"arguments":        stringsFromAPI(b.Arguments),
		"properties_key":   b.PropertiesKey,
	}, nil
}
