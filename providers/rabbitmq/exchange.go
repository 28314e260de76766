package main

import (
	cairn "cairn.dev/sdk-go"
)

// exchangeType is `rabbitmq_exchange`. RabbitMQ cannot change an exchange
// once declared, so any change of it replaces it. Import id: `name@vhost`.
type exchangeType struct{ vhostObject }

// exchanges is rabbitmq_exchange.
var exchanges = exchangeType{vhostObject{
	typeName: "rabbitmq_exchange", collection: "exchanges", nameAttr: "name", block: "settings",
	readBlock: readExchangeSettings,
}}

func (exchangeType) schema() cairn.Schema {
	return cairn.Schema{Block: cairn.Block{
		Description: "A RabbitMQ exchange.",
		Attributes: map[string]cairn.Attr{
			"id":    idAttr,
			"name":  {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The exchange's name."},
			"vhost": vhostAttr,
		},
		Blocks: map[string]cairn.NestedBlock{
			"settings": {Nesting: cairn.NestingSingle, MinItems: 1, MaxItems: 1, Block: cairn.Block{
				Description: "How the exchange is declared; a change replaces it.",
				Attributes: map[string]cairn.Attr{
					"type":        {Type: cairn.String, Required: true, Description: "`direct`, `fanout`, `topic`, `headers`, or a plugin's type."},
					"durable":     {Type: cairn.Bool, Optional: true, Computed: true, Description: "Whether it survives a restart; false when unset."},
					"auto_delete": {Type: cairn.Bool, Optional: true, Computed: true, Description: "Whether it goes when its last binding goes; false when unset."},
					"internal":    {Type: cairn.Bool, Optional: true, Computed: true, Description: "Whether clients cannot publish to it directly; false when unset."},
					"arguments": {
						Type: cairn.MapOf(cairn.String), Optional: true, Computed: true,
						Description: "Optional arguments (`alternate-exchange`…); none when unset.",
					},
				},
			}},
		},
	}}
}

// exchangeAPI is an exchange as the API reads and writes it.
type exchangeAPI struct {
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

func (exchangeType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	nestedDefaults(req, resp, "settings", map[string]any{"durable": false, "auto_delete": false, "internal": false, "arguments": cairn.Map{}})
	resp.RequiresReplacePath(cairn.At("settings"))
	planID(resp, nameAtVhostID, "name", "vhost")
	return nil
}

func (t exchangeType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	settings, _ := planned.Object("settings")
	args, err := argumentsToAPI(stringMap(settings, "arguments"), cairn.At("settings", "arguments"))
	if err != nil {
		return nil, err
	}
	body := exchangeAPI{Arguments: args}
	body.Type, _ = settings.String("type")
	body.Durable, _ = settings.Bool("durable")
	body.AutoDelete, _ = settings.Bool("auto_delete")
	body.Internal, _ = settings.Bool("internal")
	return t.put(c, planned, body)
}

func (t exchangeType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	// Every attribute but the computed id replaces the exchange: an update
	// has nothing to send.
	return planned, nil
}

// readExchangeSettings reads the exchange at apiPath as its `settings`.
func readExchangeSettings(c *Client, apiPath string) (cairn.Object, error) {
	var e exchangeAPI
	if err := c.get(apiPath, &e); err != nil {
		return nil, err
	}
	return cairn.Object{
		"type": e.Type, "durable": e.Durable, "auto_delete": e.AutoDelete, "internal": e.Internal,
		"arguments": stringsFromAPI(e.Arguments),
	}, nil
}
