package tfbridge

import (
	"context"
	"strings"
	"testing"
	"time"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// leaseBlock is an ephemeral resource type: a scope in, a sensitive token
// out.
var leaseBlock = &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{
	{Name: "scope", Type: tftypes.String, Required: true},
	{Name: "token", Type: tftypes.String, Computed: true, Sensitive: true},
}}

var leaseType = leaseBlock.ValueType()

func lease(scope, token tftypes.Value) tftypes.Value {
	return tftypes.NewValue(leaseType, map[string]tftypes.Value{"scope": scope, "token": token})
}

func leaseValue(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(leaseType, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// leaseServer offers the `lease` ephemeral type, records every call and
// answers Open with open.
type leaseServer struct {
	fakeServer
	calls []string
	open  *tfprotov6.OpenEphemeralResourceResponse
	got   *tfprotov6.OpenEphemeralResourceRequest
}

func (l *leaseServer) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{
		ResourceSchemas:          map[string]*tfprotov6.Schema{"widget": {Block: widgetBlock}},
		EphemeralResourceSchemas: map[string]*tfprotov6.Schema{"lease": {Block: leaseBlock}},
	}, nil
}

func (l *leaseServer) ValidateEphemeralResourceConfig(_ context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	l.calls = append(l.calls, "validate "+req.TypeName)
	return &tfprotov6.ValidateEphemeralResourceConfigResponse{Diagnostics: []*tfprotov6.Diagnostic{{
		Severity: tfprotov6.DiagnosticSeverityError, Summary: "Bad scope",
		Attribute: tftypes.NewAttributePath().WithAttributeName("scope"),
	}}}, nil
}

func (l *leaseServer) OpenEphemeralResource(_ context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	l.calls = append(l.calls, "open "+req.TypeName)
	l.got = req
	return l.open, nil
}

func (l *leaseServer) RenewEphemeralResource(_ context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	l.calls = append(l.calls, "renew "+string(req.Private))
	return &tfprotov6.RenewEphemeralResourceResponse{Private: []byte(string(req.Private) + "+"), RenewAt: time.UnixMilli(2000)}, nil
}

func (l *leaseServer) CloseEphemeralResource(_ context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	l.calls = append(l.calls, "close "+string(req.Private))
	return &tfprotov6.CloseEphemeralResourceResponse{}, nil
}

func TestEphemeralResourcesAreOpenedRenewedAndClosedThroughTheProtocol(t *testing.T) {
	server := &leaseServer{open: &tfprotov6.OpenEphemeralResourceResponse{
		Result:  leaseValue(t, lease(str("deploy"), str("tok-1"))),
		Private: []byte("lease-1"),
		RenewAt: time.UnixMilli(1000),
	}}
	p := New(server)
	s, ok := p.Schema().EphemeralResources["lease"]
	if !ok || !s.Attributes["token"].Sensitive || !s.Attributes["token"].Computed || !s.Attributes["scope"].Required {
		t.Fatalf("schema %#v", p.Schema().EphemeralResources)
	}
	opened, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "lease", Schema: &s, Config: cairn.Object{"scope": "deploy", "token": nil}})
	if err != nil {
		t.Fatal(err)
	}
	if server.got.ClientCapabilities == nil || server.got.ClientCapabilities.DeferralAllowed {
		t.Errorf("the server was not told it may not defer: %#v", server.got.ClientCapabilities)
	}
	config, err := server.got.Config.Unmarshal(leaseType)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, config, lease(str("deploy"), null(tftypes.String)))
	if opened.Result["token"] != "tok-1" || string(opened.Private) != "lease-1" || opened.RenewAt.UnixMilli() != 1000 {
		t.Errorf("opened %#v", opened)
	}
	renewed, err := p.RenewEphemeral(&cairn.RenewEphemeralRequest{TypeName: "lease", Private: opened.Private})
	if err != nil {
		t.Fatal(err)
	}
	if string(renewed.Private) != "lease-1+" || renewed.RenewAt.UnixMilli() != 2000 {
		t.Errorf("renewed %#v", renewed)
	}
	if err := p.CloseEphemeral(&cairn.CloseEphemeralRequest{TypeName: "lease", Private: renewed.Private}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(server.calls, "|"); got != "open lease|renew lease-1|close lease-1+" {
		t.Errorf("calls %s", got)
	}
}

func TestEphemeralErrorsKeepTheirAttributePath(t *testing.T) {
	server := &leaseServer{open: &tfprotov6.OpenEphemeralResourceResponse{Diagnostics: []*tfprotov6.Diagnostic{{
		Severity: tfprotov6.DiagnosticSeverityError, Summary: "Scope not allowed", Detail: "deploy is closed",
		Attribute: tftypes.NewAttributePath().WithAttributeName("scope"),
	}}}}
	p := New(server)
	_, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "lease", Config: cairn.Object{"scope": "deploy", "token": nil}})
	if err == nil || err.Error() != "Scope not allowed (at .scope): deploy is closed" {
		t.Errorf("open: %v", err)
	}
	err = p.ValidateEphemeral("lease", cairn.Object{"scope": "x", "token": nil})
	if err == nil || !strings.HasPrefix(err.Error(), "Bad scope (at .scope)") {
		t.Errorf("validate: %v", err)
	}
	_, err = p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "nope", Config: cairn.Object{}})
	if err == nil || err.Error() != "Unknown ephemeral resource type `nope`" {
		t.Errorf("unknown type: %v", err)
	}
}

func TestADeferredOpenIsRefused(t *testing.T) {
	server := &leaseServer{open: &tfprotov6.OpenEphemeralResourceResponse{
		Deferred: &tfprotov6.Deferred{Reason: tfprotov6.DeferredReasonProviderConfigUnknown},
	}}
	_, err := New(server).OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "lease", Config: cairn.Object{"scope": "x", "token": nil}})
	if err == nil || !strings.Contains(err.Error(), "the provider deferred the opening of the ephemeral resource (reason PROVIDER_CONFIG_UNKNOWN)") {
		t.Errorf("deferred: %v", err)
	}
}

// v5LeaseServer is a protocol 5 server with the `lease` ephemeral type:
// tf5to6server passes ephemeral resources on.
type v5LeaseServer struct {
	tfprotov5.ProviderServer
	calls []string
}

func (v *v5LeaseServer) GetProviderSchema(context.Context, *tfprotov5.GetProviderSchemaRequest) (*tfprotov5.GetProviderSchemaResponse, error) {
	return &tfprotov5.GetProviderSchemaResponse{
		Provider: &tfprotov5.Schema{Block: &tfprotov5.SchemaBlock{}},
		EphemeralResourceSchemas: map[string]*tfprotov5.Schema{"lease": {Block: &tfprotov5.SchemaBlock{Attributes: []*tfprotov5.SchemaAttribute{
			{Name: "scope", Type: tftypes.String, Required: true},
			{Name: "token", Type: tftypes.String, Computed: true, Sensitive: true},
		}}}},
	}, nil
}

func (v *v5LeaseServer) OpenEphemeralResource(_ context.Context, req *tfprotov5.OpenEphemeralResourceRequest) (*tfprotov5.OpenEphemeralResourceResponse, error) {
	v.calls = append(v.calls, "open "+req.TypeName)
	result, err := tfprotov5.NewDynamicValue(leaseType, lease(str("v5"), str("tok-v5")))
	if err != nil {
		return nil, err
	}
	return &tfprotov5.OpenEphemeralResourceResponse{Result: &result, Private: []byte("p5")}, nil
}

func (v *v5LeaseServer) RenewEphemeralResource(_ context.Context, req *tfprotov5.RenewEphemeralResourceRequest) (*tfprotov5.RenewEphemeralResourceResponse, error) {
	v.calls = append(v.calls, "renew "+string(req.Private))
	return &tfprotov5.RenewEphemeralResourceResponse{Private: req.Private}, nil
}

func (v *v5LeaseServer) CloseEphemeralResource(_ context.Context, req *tfprotov5.CloseEphemeralResourceRequest) (*tfprotov5.CloseEphemeralResourceResponse, error) {
	v.calls = append(v.calls, "close "+string(req.Private))
	return &tfprotov5.CloseEphemeralResourceResponse{}, nil
}

func TestProtocol5EphemeralResourcesPassThroughTheUpgrade(t *testing.T) {
	v5 := &v5LeaseServer{}
	p := New(UpgradeV5(func() tfprotov5.ProviderServer { return v5 }, nil))
	if _, ok := p.Schema().EphemeralResources["lease"]; !ok {
		t.Fatalf("schema %#v", p.Schema())
	}
	opened, err := p.OpenEphemeral(&cairn.OpenEphemeralRequest{TypeName: "lease", Config: cairn.Object{"scope": "v5", "token": nil}})
	if err != nil {
		t.Fatal(err)
	}
	if opened.Result["token"] != "tok-v5" || !opened.RenewAt.IsZero() {
		t.Errorf("opened %#v", opened)
	}
	if _, err := p.RenewEphemeral(&cairn.RenewEphemeralRequest{TypeName: "lease", Private: opened.Private}); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseEphemeral(&cairn.CloseEphemeralRequest{TypeName: "lease", Private: opened.Private}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v5.calls, "|"); got != "open lease|renew p5|close p5" {
		t.Errorf("calls %s", got)
	}
}
