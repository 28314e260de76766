module cairn.example/tests/tfjson

go 1.26

require github.com/hashicorp/terraform-json v0.29.0

require (
	github.com/apparentlymart/go-textseg/v15 v15.0.0 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/zclconf/go-cty v1.16.4 // indirect
	golang.org/x/text v0.11.0 // indirect
)
