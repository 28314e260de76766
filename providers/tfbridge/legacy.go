package tfbridge

import "github.com/hashicorp/terraform-plugin-go/tfprotov6"

func normaliseLegacy(s tfprotov6.ProviderServer) tfprotov6.ProviderServer { return s }
