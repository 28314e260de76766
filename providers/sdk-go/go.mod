module cairn.dev/sdk-go

go 1.26
