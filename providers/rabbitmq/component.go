//go:build wasip1

package main

import (
	cairn "cairn.dev/sdk-go"
	"cairn.dev/sdk-go/cairnhttp"
)

// The component's provider: requests through the host's wasi:http, debug
// lines into the host's log.
func init() {
	cairn.Export(&provider{transport: cairnhttp.Transport{}, logf: cairn.Debugf})
}
