package cairn

import (
	"encoding/json"
	"testing"

	moves "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_state_moves"
	wire "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_types"
)

// mover takes `old_file` objects (with a `path` where `t` has `filename`).
type mover struct{ panicky }

func (*mover) MoveState(req *MoveStateRequest) (*MoveStateResponse, error) {
	if req.SourceTypeName != "old_file" {
		return nil, Errorf("Cannot move %s to %s", req.SourceTypeName, req.TargetTypeName)
	}
	var old struct{ Path, Content string }
	if err := json.Unmarshal([]byte(req.SourceStateJSON), &old); err != nil {
		return nil, err
	}
	state := testPrior(old.Content)
	state["filename"] = old.Path
	return &MoveStateResponse{TargetState: state, TargetPrivate: append([]byte("moved:"), req.SourcePrivate...)}, nil
}

func moveRequest(source string) moves.MoveRequest {
	return moves.MoveRequest{
		SourceProviderAddress: "registry.terraform.io/hashicorp/old",
		SourceTypeName:        source,
		SourceState:           `{"path":"b.txt","content":"hi"}`,
		SourcePrivate:         []byte("p"),
		TargetTypeName:        "t",
	}
}

func TestAMoverConvertsAStoredObjectOfAnotherType(t *testing.T) {
	g := newGlue(&mover{})
	g.Configure(wire.Value{})
	resp := moveGlue{g}.MoveResourceState(moveRequest("old_file"))
	if len(resp.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %#v", resp.Diagnostics)
	}
	state, err := objectIn(resp.TargetState, "state")
	if err != nil {
		t.Fatal(err)
	}
	if state["filename"] != "b.txt" || state["content"] != "hi" {
		t.Errorf("state %#v", state)
	}
	if string(resp.TargetPrivate) != "moved:p" {
		t.Errorf("private %q", resp.TargetPrivate)
	}
	refused := moveGlue{g}.MoveResourceState(moveRequest("other"))
	if len(refused.Diagnostics) != 1 || refused.Diagnostics[0].Summary != "Cannot move other to t" {
		t.Errorf("diagnostics: %#v", refused.Diagnostics)
	}
}

// A provider without MoveState gives the answer the host reads as "no
// moves": one error with the agreed summary, no detail and no path.
func TestAProviderWithoutMoveStateAnswersUnsupported(t *testing.T) {
	g := newGlue(&panicky{})
	g.Configure(wire.Value{})
	resp := moveGlue{g}.MoveResourceState(moveRequest("old_file"))
	want := wire.Diagnostic{Severity: wire.Severity_Error, Summary: "cairn: state-moves not implemented by this provider"}
	if len(resp.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %#v", resp.Diagnostics)
	}
	d := resp.Diagnostics[0]
	if d.Severity != want.Severity || d.Summary != want.Summary || d.Detail != "" || len(d.Path) != 0 {
		t.Errorf("diagnostic %#v", d)
	}
}
