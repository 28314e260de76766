package cairn

import (
	"fmt"
	"strings"
	"testing"
	"time"

	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// leaser offers `lease`: open hands out lease N with a computed `token`,
// renew extends it, close revokes it; each call is recorded.
type leaser struct {
	panicky
	calls []string
}

func (*leaser) Schema() *ProviderSchema {
	return &ProviderSchema{
		Resources: map[string]Schema{"t": *testSchema()},
		EphemeralResources: map[string]Schema{"lease": {Block: Block{Attributes: map[string]Attr{
			"scope": {Type: String, Required: true},
			"token": {Type: String, Computed: true, Sensitive: true},
		}}}},
	}
}

func (*leaser) ValidateEphemeral(typeName string, config Object) error {
	if config["scope"] == "" {
		return Errorf("Empty scope").At("scope")
	}
	return nil
}

func (l *leaser) OpenEphemeral(req *OpenEphemeralRequest) (*OpenEphemeralResponse, error) {
	l.calls = append(l.calls, "open "+req.Config["scope"].(string))
	result := req.Config.Clone()
	result["token"] = "tok-" + req.Config["scope"].(string)
	return &OpenEphemeralResponse{Result: result, Private: []byte("lease-1"), RenewAt: time.UnixMilli(1_700_000_000_000)}, nil
}

func (l *leaser) RenewEphemeral(req *RenewEphemeralRequest) (*RenewEphemeralResponse, error) {
	l.calls = append(l.calls, "renew "+string(req.Private))
	return &RenewEphemeralResponse{Private: append(req.Private, '+')}, nil
}

func (l *leaser) CloseEphemeral(req *CloseEphemeralRequest) error {
	l.calls = append(l.calls, "close "+string(req.Private))
	if string(req.Private) == "gone" {
		return Errorf("Lease %s already revoked", req.Private)
	}
	return nil
}

func configuredEphemeral(t *testing.T, p Provider) ephemeralGlue {
	t.Helper()
	g := newGlue(p)
	if diags := g.Configure(wire.Value{}); len(diags) != 0 {
		t.Fatalf("configure: %#v", diags)
	}
	return ephemeralGlue{g}
}

func TestAnEphemeralResourceIsOpenedRenewedAndClosed(t *testing.T) {
	l := &leaser{}
	e := configuredEphemeral(t, l)
	schemas := e.Schemas()
	if len(schemas) != 1 || schemas[0].F0 != "lease" {
		t.Fatalf("schemas %#v", schemas)
	}
	opened := e.Open("lease", mustEncode(t, Object{"scope": "deploy", "token": nil}))
	if len(opened.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %#v", opened.Diagnostics)
	}
	result, err := objectIn(opened.Result, "result")
	if err != nil {
		t.Fatal(err)
	}
	if result["token"] != "tok-deploy" {
		t.Errorf("result %#v", result)
	}
	if !anySensitive(opened.Result) {
		t.Errorf("the sensitive token is not marked: %#v", opened.Result)
	}
	if string(opened.Private) != "lease-1" || opened.RenewAt.IsNone() || opened.RenewAt.Some() != 1_700_000_000_000 {
		t.Errorf("private %q, renew at %#v", opened.Private, opened.RenewAt)
	}
	renewed := e.Renew("lease", opened.Private)
	if len(renewed.Diagnostics) != 0 || string(renewed.Private) != "lease-1+" || !renewed.RenewAt.IsNone() {
		t.Errorf("renewed %#v", renewed)
	}
	if diags := e.Close("lease", renewed.Private); len(diags) != 0 {
		t.Errorf("close: %#v", diags)
	}
	want := "open deploy|renew lease-1|close lease-1+"
	if got := strings.Join(l.calls, "|"); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}

func anySensitive(v wire.Value) bool {
	for _, n := range v.Nodes {
		if n.Sensitive {
			return true
		}
	}
	return false
}

func TestEphemeralErrorsKeepTheirPathsAndSummaries(t *testing.T) {
	e := configuredEphemeral(t, &leaser{})
	diags := e.Validate("lease", mustEncode(t, Object{"scope": "", "token": nil}))
	if len(diags) != 1 || diags[0].Summary != "Empty scope" || len(diags[0].Path) != 1 {
		t.Errorf("validate: %#v", diags)
	}
	if diags := e.Close("lease", []byte("gone")); len(diags) != 1 || diags[0].Summary != "Lease gone already revoked" {
		t.Errorf("close: %#v", diags)
	}
	unknown := e.Open("nope", mustEncode(t, Object{}))
	if len(unknown.Diagnostics) != 1 || unknown.Diagnostics[0].Summary != "Unknown ephemeral resource type `nope`" {
		t.Errorf("open of an unknown type: %#v", unknown.Diagnostics)
	}
}

// A panic in OpenEphemeral is an error diagnostic, and renewing keeps the
// private bytes when the call fails.
type panickyLeaser struct{ leaser }

func (*panickyLeaser) OpenEphemeral(*OpenEphemeralRequest) (*OpenEphemeralResponse, error) {
	panic("no lease today")
}

func (*panickyLeaser) RenewEphemeral(*RenewEphemeralRequest) (*RenewEphemeralResponse, error) {
	return nil, fmt.Errorf("the store is down")
}

func TestAPanicOrAFailedRenewIsADiagnostic(t *testing.T) {
	e := configuredEphemeral(t, &panickyLeaser{})
	opened := e.Open("lease", mustEncode(t, Object{"scope": "x", "token": nil}))
	if len(opened.Diagnostics) != 1 || opened.Diagnostics[0].Summary != "Provider bug: panic: no lease today" {
		t.Errorf("open: %#v", opened.Diagnostics)
	}
	renewed := e.Renew("lease", []byte("p"))
	if len(renewed.Diagnostics) != 1 || renewed.Diagnostics[0].Summary != "the store is down" || string(renewed.Private) != "p" {
		t.Errorf("renew: %#v", renewed)
	}
}

// A provider without the hook offers no ephemeral resource types.
func TestAProviderWithoutTheHookOffersNoEphemeralResources(t *testing.T) {
	e := configuredEphemeral(t, &panicky{})
	if schemas := e.Schemas(); len(schemas) != 0 {
		t.Errorf("schemas %#v", schemas)
	}
	opened := e.Open("lease", mustEncode(t, Object{}))
	if len(opened.Diagnostics) != 1 || opened.Diagnostics[0].Summary != "Unknown ephemeral resource type `lease`" {
		t.Errorf("open: %#v", opened.Diagnostics)
	}
}

// Declaring ephemeral types without the hook is a schema mistake, shown on
// every call.
type declaresOnly struct{ panicky }

func (*declaresOnly) Schema() *ProviderSchema {
	return &ProviderSchema{EphemeralResources: map[string]Schema{"lease": {}}}
}

func TestDeclaredEphemeralTypesNeedTheHook(t *testing.T) {
	g := newGlue(&declaresOnly{})
	diags := g.Configure(wire.Value{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "ephemeral resources `lease` are declared, but the provider does not implement cairn.EphemeralResourcer") {
		t.Errorf("diagnostics: %#v", diags)
	}
}
