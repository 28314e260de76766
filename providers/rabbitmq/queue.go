package main

import (
	cairn "cairn.dev/sdk-go"
)

// queueType is `rabbitmq_queue`. RabbitMQ cannot change a queue once
// declared, so any change of it replaces it (and drops its messages and
// bindings). Import id: `name@vhost`.
type queueType struct{ vhostObject }

// queues is rabbitmq_queue.
var queues = queueType{vhostObject{
	typeName: "rabbitmq_queue", collection: "queues", nameAttr: "name", block: "settings",
	readBlock: readQueueSettings,
}}

func (queueType) schema() cairn.Schema {
	return cairn.Schema{Block: cairn.Block{
		Description: "A RabbitMQ queue.",
		Attributes: map[string]cairn.Attr{
			"id":    idAttr,
			"name":  {Type: cairn.String, Required: true, RequiresReplace: true, Description: "The queue's name."},
			"vhost": vhostAttr,
		},
		Blocks: map[string]cairn.NestedBlock{
			"settings": {Nesting: cairn.NestingSingle, MinItems: 1, MaxItems: 1, Block: cairn.Block{
				Description: "How the queue is declared; a change replaces it.",
				Attributes: map[string]cairn.Attr{
					"durable":     {Type: cairn.Bool, Optional: true, Computed: true, Description: "Whether it survives a restart; false when unset."},
					"auto_delete": {Type: cairn.Bool, Optional: true, Computed: true, Description: "Whether it goes when its last consumer goes; false when unset."},
					"arguments": {
						Type: cairn.MapOf(cairn.String), Optional: true, Computed: true,
						Description: "Optional arguments (`x-queue-type`, `x-max-length`…), written as strings; " +
							"the ones RabbitMQ takes as numbers or booleans are sent as such. None when unset.",
					},
				},
			}},
		},
	}}
}

// queueAPI is a queue as the API reads and writes it.
type queueAPI struct {
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

func (queueType) plan(req *cairn.PlanRequest, resp *cairn.PlanResponse) error {
	nestedDefaults(req, resp, "settings", map[string]any{"durable": false, "auto_delete": false, "arguments": cairn.Map{}})
	resp.RequiresReplacePath(cairn.At("settings"))
	planID(resp, nameAtVhostID, "name", "vhost")
	return nil
}

func (t queueType) create(c *Client, planned cairn.Object) (cairn.Object, error) {
	settings, _ := planned.Object("settings")
	args, err := argumentsToAPI(stringMap(settings, "arguments"), cairn.At("settings", "arguments"))
	if err != nil {
		return nil, err
	}
	body := queueAPI{Arguments: args}
	body.Durable, _ = settings.Bool("durable")
	body.AutoDelete, _ = settings.Bool("auto_delete")
	return t.put(c, planned, body)
}

func (queueType) update(c *Client, prior, planned cairn.Object) (cairn.Object, error) {
	// Every attribute but the computed id replaces the queue.
	return planned, nil
}

// readQueueSettings reads the queue at apiPath as its `settings`.
func readQueueSettings(c *Client, apiPath string) (cairn.Object, error) {
	var q queueAPI
	if err := c.get(apiPath, &q); err != nil {
		return nil, err
	}
	return cairn.Object{"durable": q.Durable, "auto_delete": q.AutoDelete, "arguments": stringsFromAPI(q.Arguments)}, nil
}
