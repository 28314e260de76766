module cairn.dev/provider-gomisbehave

go 1.26

require cairn.dev/sdk-go v0.2.0

replace cairn.dev/sdk-go => ../../sdk-go
