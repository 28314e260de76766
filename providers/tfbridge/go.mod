module cairn.dev/tfbridge

go 1.26

require (
	cairn.dev/sdk-go v0.2.0
	github.com/hashicorp/terraform-plugin-go v0.31.0
	github.com/hashicorp/terraform-plugin-mux v0.23.1
)

require (
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)

replace cairn.dev/sdk-go => ../sdk-go
