package main

import (
	cairn "cairn.dev/sdk-go"
)

// policyType is `rabbitmq_policy`: a policy that applies a definition to
// the queues and exchanges whose names match a pattern. Changed in place.
// Import id: `name@vhost`.
type policyType struct{ vhostObject }

// policies is rabbitmq_policy.
var policies = policyType{vhostObject{
	typeName: "rabbitmq_policy", collection: "policies", nameAttr: "name", block: "policy",
	readBlock: readPolicy,
}}

func (policyType) schema() cairn.Schema {
	return cairn.Schema{Block: cairn.Block{
		Description: "A RabbitMQ policy.",
		Attributes: map[string]cairn.Attr{
			"id":    idAttr,
			"name":  {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The policy's name."},
			"vhost": {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The virtual host."},
		},
		Blocks: map[string]cairn.NestedBlock{
			"policy": {Nesting: cairn.NestingSingle, MinItems: 1, MaxItems: 1, Block: cairn.Block{
				Description: "The policy itself.",
				Attributes: map[string]cairn.Attr{
					"pattern":  {Type: cairn.String, Required: true, Description: "A regular expression of the names it applies to."},
					"priority": {Type: cairn.Number, Required: true, Description: "Of the matching policies, the one of highest priority applies."},
					"apply_to": {Type: cairn.String, Optional: true, Computed: true, Description: "`all`, `queues` or `exchanges`; `all` when unset."},
					"definition": {
						Type: cairn.MapOf(cairn.String), Required: true,
						Description: "What it sets (`max-length`, `message-ttl`, `ha-mode`…), written as strings: whole numbers, " +
							"true and false, and JSON lists or objects are sent as such.",
					},
				},
			}},
		},
	}}
}

// validatePolicy checks what the schema cannot: what the policy applies
// to.
func validatePolicy(config cairn.Object) error {
	if p, ok := config.Object("policy"); ok {
		if a, ok := p.String("apply_to"); ok && a != "all" && a != "queues" && a != "exchanges" {
			return cairn.Errorf("apply_to must be \"all\", \"queues\" or \"exchanges\", not %q", a).At("policy", "apply_to")
		}
	}
	return nil
}

// policyAPI is a policy as the API reads and writes it.
type policyAPI struct {
	Pattern    string         `json:"pattern"`
	Priority   int64          `json:"priority"`
	ApplyTo    string         `json:"apply-to"`
	Definition map[string]any `json:"definition"`
}

func (policyType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	nestedDefaults(req, resp, "policy", map[string]any{"apply_to": "all"})
	planID(resp, nameAtVhostID, "name", "vhost")
	return nil
}

// write sets the policy planned describes.
func (t policyType) write(c *Client, planned cairn.Object) (cairn.Object, error) {
	policy, _ := planned.Object("policy")
	body := policyAPI{Definition: definitionToAPI(stringMap(policy, "definition"))}
	body.Pattern, _ = policy.String("pattern")
	body.Priority, _ = policy.Int("priority")
	body.ApplyTo, _ = policy.String("apply_to")
	return t.put(c, planned, body)
}

func (t policyType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	return t.write(c, planned)
}

func (t policyType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	return t.write(c, planned)
}

// readPolicy reads the policy at apiPath as its `policy` block.
func readPolicy(c *Client, apiPath string) (cairn.Object, error) {
	var p policyAPI
	if err := c.get(apiPath, &p); err != nil {
		return nil, err
	}
	return cairn.Object{
		"pattern": p.Pattern, "priority": p.Priority, "apply_to": p.ApplyTo, "definition": stringsFromAPI(p.Definition),
	}, nil
}
