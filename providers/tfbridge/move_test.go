package tfbridge

import (
	"context"
	"strings"
	"testing"

	cairn "cairn.dev/sdk-go"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// moveServer records the MoveResourceState request it is given and
// answers with answer.
type moveServer struct {
	fakeServer
	got    *tfprotov6.MoveResourceStateRequest
	answer *tfprotov6.MoveResourceStateResponse
}

func (m *moveServer) MoveResourceState(_ context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	m.got = req
	return m.answer, nil
}

func TestMoveStatePassesTheSourceAndReturnsTheTarget(t *testing.T) {
	target := widget(str("red"), num(2), str("w-1"), []tftypes.Value{}, []tftypes.Value{})
	server := &moveServer{answer: &tfprotov6.MoveResourceStateResponse{TargetState: dynamic(t, target), TargetPrivate: []byte("p2")}}
	moved, err := New(server).MoveState(&cairn.MoveStateRequest{
		SourceProviderAddress: "registry.terraform.io/example/old", SourceTypeName: "gadget", SourceSchemaVersion: 3,
		SourceStateJSON: `{"id":"w-1"}`, SourcePrivate: []byte("p1"), TargetTypeName: "widget",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := server.got
	if got.SourceProviderAddress != "registry.terraform.io/example/old" || got.SourceTypeName != "gadget" ||
		got.SourceSchemaVersion != 3 || string(got.SourceState.JSON) != `{"id":"w-1"}` ||
		string(got.SourcePrivate) != "p1" || got.TargetTypeName != "widget" {
		t.Fatalf("request: %+v", got)
	}
	state := moved.TargetState
	if state["id"] != "w-1" || state["color"] != "red" || state["size"] != int64(2) || string(moved.TargetPrivate) != "p2" {
		t.Fatalf("moved: %#v %q", state, moved.TargetPrivate)
	}
}

func TestMoveStateErrorsKeepTheirAttributePath(t *testing.T) {
	server := &moveServer{answer: &tfprotov6.MoveResourceStateResponse{Diagnostics: []*tfprotov6.Diagnostic{{
		Severity: tfprotov6.DiagnosticSeverityError, Summary: "Cannot move gadget", Detail: "no color",
		Attribute: tftypes.NewAttributePath().WithAttributeName("color"),
	}}}}
	_, err := New(server).MoveState(&cairn.MoveStateRequest{SourceTypeName: "gadget", SourceStateJSON: `{}`, TargetTypeName: "widget"})
	var diags cairn.Diagnostics
	if ds, ok := err.(cairn.Diagnostics); ok {
		diags = ds
	}
	if len(diags) != 1 || diags[0].Summary != "Cannot move gadget" || diags[0].Path.String() != ".color" {
		t.Fatalf("error: %#v", err)
	}
	if _, err := New(server).MoveState(&cairn.MoveStateRequest{SourceTypeName: "gadget", TargetTypeName: "nope"}); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Fatalf("an unknown target type: %v", err)
	}
}
