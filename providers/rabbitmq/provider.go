package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	cairn "cairn.dev/sdk-go"
)

// provider is the rabbitmq provider: RabbitMQ's virtual hosts, users,
// permissions, exchanges, queues, bindings and policies, managed through
// the management HTTP API.
type provider struct {
	cairn.Base
	// client is nil until Configure is given a known endpoint.
	client *Client
	// transport carries the requests: the host's wasi:http in the
	// component, anything else in a test.
	transport http.RoundTripper
	// logf writes a debug line to the host's log.
	logf func(format string, args ...any)
}

// Schema implements cairn.Provider.
func (p *provider) Schema() *cairn.ProviderSchema {
	resources := map[string]cairn.Schema{}
	for name, t := range resourceTypes {
		resources[name] = t.schema()
	}
	return &cairn.ProviderSchema{
		Provider: cairn.Schema{Block: cairn.Block{
			Description: "RabbitMQ, through its management HTTP API. The provider holds no credentials: grant the API's " +
				"origin in the provider's sandbox block, with the credentials in that grant's headers.",
			Attributes: map[string]cairn.Attr{
				"endpoint": {Type: cairn.String, Required: true, Description: "The management API's URL, such as `http://127.0.0.1:15672`."},
				// The community provider's credentials, accepted only to say
				// where they go instead.
				"username": {Type: cairn.String, Optional: true, Description: "Not supported: credentials go in the sandbox's http grant."},
				"password": {Type: cairn.String, Optional: true, Sensitive: true, Description: "Not supported: credentials go in the sandbox's http grant."},
			},
		}},
		Resources: resources,
	}
}

// Configure implements cairn.Provider.
func (p *provider) Configure(config cairn.Object) error {
	if !config.IsNull("username") || !config.IsNull("password") {
		return cairn.Errorf("The rabbitmq provider takes no username or password").
			WithDetail("The provider never sees credentials: the operator grants them with the API's origin, " +
				"sandbox { http { url = \"http://HOST:15672\", headers = { Authorization = \"Basic ${base64encode(\"user:password\")}\" } } }, " +
				"and cairn adds them to each request on its way out.").
			At("username")
	}
	if config.IsUnknown("endpoint") {
		// Known by apply; until then nothing is sent.
		return nil
	}
	endpoint, ok := config.String("endpoint")
	if !ok {
		return cairn.Errorf("The rabbitmq provider needs an endpoint").
			WithDetail("Set it in the provider block: provider \"rabbitmq\" { endpoint = \"http://127.0.0.1:15672\" }.").
			At("endpoint")
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return cairn.Errorf("endpoint %q is not an http or https URL", endpoint).
			WithDetail("Write the management API's URL, such as http://127.0.0.1:15672.").
			At("endpoint")
	}
	p.client = NewClient(endpoint, p.transport, p.logf)
	return nil
}

// typeOf is the resource type typeName, or an error naming the ones there
// are.
func typeOf(typeName string) (resourceType, error) {
	if t, ok := resourceTypes[typeName]; ok {
		return t, nil
	}
	return nil, cairn.Errorf("The rabbitmq provider has no resource type `%s`", typeName).
		WithDetail("It has rabbitmq_vhost, rabbitmq_user, rabbitmq_permissions, rabbitmq_exchange, rabbitmq_queue, rabbitmq_binding and rabbitmq_policy.")
}

// connected is the client, or an error when the endpoint is not known.
func (p *provider) connected() (*Client, error) {
	if p.client == nil {
		return nil, cairn.Errorf("The rabbitmq provider's endpoint is not known yet").At("endpoint")
	}
	return p.client, nil
}

// typeAndClient is the resource type typeName and the client its objects
// are reached with: what Apply, Read and Import each need first.
func (p *provider) typeAndClient(typeName string) (resourceType, *Client, error) {
	t, err := typeOf(typeName)
	if err != nil {
		return nil, nil, err
	}
	c, err := p.connected()
	if err != nil {
		return nil, nil, err
	}
	return t, c, nil
}

// Validate implements cairn.Provider.
func (p *provider) Validate(typeName string, config cairn.Object) error {
	if _, err := typeOf(typeName); err != nil {
		return err
	}
	switch typeName {
	case "rabbitmq_binding":
		if err := validateBinding(config); err != nil {
			return err
		}
		return validateArguments(config, cairn.At("arguments"))
	case "rabbitmq_exchange", "rabbitmq_queue":
		settings, _ := config.Object("settings")
		return validateArguments(settings, cairn.At("settings", "arguments"))
	case "rabbitmq_policy":
		return validatePolicy(config)
	}
	return nil
}

// validateArguments checks that the `arguments` of block (when known) are
// what RabbitMQ takes: whole numbers and booleans where it wants them.
func validateArguments(block cairn.Object, at cairn.Path) error {
	args, ok := block.StringMap("arguments")
	if !ok {
		return nil
	}
	_, err := argumentsToAPI(args, at)
	return err
}

// Plan implements cairn.Provider.
func (p *provider) Plan(req *cairn.PlanRequest) (*cairn.PlanResponse, error) {
	t, err := typeOf(req.TypeName)
	if err != nil {
		return nil, err
	}
	resp := cairn.PlanFromProposed(req)
	if err := t.plan(req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Apply implements cairn.Provider.
func (p *provider) Apply(req *cairn.ApplyRequest) (*cairn.ApplyResponse, error) {
	t, c, err := p.typeAndClient(req.TypeName)
	if err != nil {
		return nil, err
	}
	switch {
	case req.IsDelete():
		if err := t.remove(c, req.PriorState); err != nil {
			return nil, fmt.Errorf("deleting %s %s: %w", req.TypeName, describe(req.PriorState), err)
		}
		return cairn.Deleted(), nil
	case req.IsCreate():
		state, err := t.create(c, req.PlannedState)
		if err != nil {
			return nil, explained(fmt.Sprintf("creating %s %s", req.TypeName, describe(req.PlannedState)), err)
		}
		return cairn.Applied(state), nil
	default:
		state, err := t.update(c, req.PriorState, req.PlannedState)
		if err != nil {
			return nil, explained(fmt.Sprintf("updating %s %s", req.TypeName, describe(req.PriorState)), err)
		}
		return cairn.Applied(state), nil
	}
}

// Read implements cairn.Provider: nil when the object is gone.
func (p *provider) Read(req *cairn.ReadRequest) (cairn.Object, error) {
	t, c, err := p.typeAndClient(req.TypeName)
	if err != nil {
		return nil, err
	}
	state, err := t.read(c, req.CurrentState)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", req.TypeName, describe(req.CurrentState), err)
	}
	return state, nil
}

// Import implements cairn.Provider.
func (p *provider) Import(typeName, id string) (cairn.Object, error) {
	t, c, err := p.typeAndClient(typeName)
	if err != nil {
		return nil, err
	}
	state, err := t.importState(c, id)
	if err != nil {
		return nil, fmt.Errorf("importing %s %q: %w", typeName, id, err)
	}
	if state == nil {
		return nil, cairn.Errorf("Cannot import %s %q: RabbitMQ has no such object", typeName, id)
	}
	return state, nil
}

// describe names an object for a message: its id, else its name.
func describe(o cairn.Object) string {
	if id, ok := o.String("id"); ok {
		return fmt.Sprintf("%q", id)
	}
	if name, ok := o.String("name"); ok {
		return fmt.Sprintf("%q", name)
	}
	return "(new)"
}

// explained wraps err with what was being done, keeping a diagnostic's
// attribute path.
func explained(doing string, err error) error {
	var d *cairn.Diagnostic
	if errors.As(err, &d) {
		d.Summary = doing + ": " + d.Summary
		return d
	}
	return fmt.Errorf("%s: %w", doing, err)
}
