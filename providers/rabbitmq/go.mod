module cairn.dev/providers/rabbitmq

go 1.26

require cairn.dev/sdk-go v0.2.0

// The SDK is taken from this repository.
replace cairn.dev/sdk-go => ../sdk-go
