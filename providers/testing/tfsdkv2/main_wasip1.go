//go:build wasip1

package main

import "cairn.dev/tfbridge/sdkv2"

// The one file a Terraform provider author adds: the provider, served to
// cairn through the bridge (main_native.go serves it to Terraform).
func init() { sdkv2.Serve(Provider()) }

func main() {}
