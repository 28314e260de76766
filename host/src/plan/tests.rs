//! Planning decisions, tested with an in-process fake provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::state::InstanceStatus;
use crate::testing::Fake;

fn fake(break_plan: bool) -> Arc<Fake> {
    Arc::new(Fake { break_plan, ..Fake::new() })
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: crate::engine::Workspace,
    providers: Providers,
}

fn setup(hcl: &str, fake: Arc<Fake>) -> Setup {
    let (dir, ws) = crate::testing::workspace(hcl);
    Setup { _dir: dir, ws, providers: crate::testing::providers(fake) }
}

fn plan_with(s: &Setup, state: &State, destroy: bool) -> Result<Plan, Vec<Diagnostic>> {
    let planner = Planner {
        config: Arc::clone(&s.ws.config),
        graph: Arc::clone(&s.ws.graph),
        providers: s.providers.clone(),
        state: Arc::new(state.clone()),
        variables: BTreeMap::new(),
        options: PlanOptions { destroy, ..PlanOptions::default() },
    };
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(planner.plan())
}

fn state_with(addr: &str, attrs: serde_json::Value, status: InstanceStatus) -> State {
    let mut state = State::new();
    state.set(InstanceState { status, ..InstanceState::new(addr.parse().unwrap(), "fake", 0, attrs) });
    state
}

fn action_of(plan: &Plan, addr: &str) -> Action {
    plan.change(&addr.parse().unwrap()).unwrap_or_else(|| panic!("no change for {addr}")).action
}

const ONE: &str = "resource \"fake_thing\" \"a\" {\n  name = \"n\"\n  size = 1\n}\n";

#[test]
fn creates_what_the_state_lacks() {
    let s = setup(ONE, fake(false));
    let plan = plan_with(&s, &State::new(), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::Create);
    assert_eq!(plan.counts(), (1, 0, 0));
    assert_eq!(plan.changes[0].planned.get_attr("id"), &Value::unknown());
}

#[test]
fn plans_no_op_when_nothing_changed() {
    let s = setup(ONE, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "n", "size": 1, "id": "x"}), InstanceStatus::Ready);
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::NoOp);
    assert!(!plan.has_changes());
}

#[test]
fn updates_in_place_and_replaces_on_requires_replace() {
    let s = setup(ONE, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "n", "size": 2, "id": "x"}), InstanceStatus::Ready);
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::Update);
    assert_eq!(plan.changes[0].planned.get_attr("id"), &Value::string("x"), "an update keeps computed values");

    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "old", "size": 1, "id": "x"}), InstanceStatus::Ready);
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::Replace);
    assert_eq!(plan.changes[0].replace_reason, Some(ReplaceReason::RequiresReplace(vec![Path::root().attr("name")])));
    assert_eq!(plan.changes[0].planned.get_attr("id"), &Value::unknown(), "a replacement is planned as a create");
    assert_eq!(plan.counts(), (1, 0, 1));
}

#[test]
fn replaces_tainted_objects() {
    let s = setup(ONE, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "n", "size": 1, "id": "x"}), InstanceStatus::Tainted);
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::Replace);
    assert_eq!(plan.changes[0].replace_reason, Some(ReplaceReason::Tainted));
}

#[test]
fn deletes_what_the_configuration_dropped_and_everything_on_destroy() {
    let s = setup(ONE, fake(false));
    let mut state =
        state_with("fake_thing.gone", serde_json::json!({"name": "g", "size": null, "id": "y"}), InstanceStatus::Ready);
    state.set(
        state_with("fake_thing.a", serde_json::json!({"name": "n", "size": 1, "id": "x"}), InstanceStatus::Ready)
            .remove(&"fake_thing.a".parse().unwrap())
            .unwrap(),
    );
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.gone"), Action::Delete);
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::NoOp);
    let plan = plan_with(&s, &state, true).unwrap();
    assert_eq!(plan.counts(), (0, 0, 2));
}

#[test]
fn unknown_values_flow_into_dependents() {
    let hcl = format!("{ONE}resource \"fake_thing\" \"b\" {{\n  name = \"b-${{fake_thing.a.id}}\"\n}}\n");
    let s = setup(&hcl, fake(false));
    let plan = plan_with(&s, &State::new(), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.b"), Action::Create);
    let b = plan.change(&"fake_thing.b".parse().unwrap()).unwrap();
    assert_eq!(b.config.get_attr("name"), &Value::unknown());
    assert_eq!(b.dependencies, vec![crate::addr::ResourceAddr::managed("fake_thing", "a")]);
}

#[test]
fn an_invalid_plan_is_refused_naming_provider_resource_path_and_rule() {
    let s = setup(ONE, fake(true));
    let errors = plan_with(&s, &State::new(), false).unwrap_err();
    let text = errors[0].to_string();
    assert!(
        text.contains(
            "provider \"fake\" produced an invalid plan for fake_thing.a: .size: planned value 99 does not match config value 1 \
             (rule: a configured attribute must be planned as configured or as its prior value)"
        ),
        "{text}"
    );
    assert!(text.contains("main.tf:1"), "{text}");
    assert!(text.contains("bug in the provider"), "{text}");
}

#[test]
fn count_expands_into_keyed_instances() {
    let hcl = "resource \"fake_thing\" \"c\" {\n  count = 2\n  name = \"n${count.index}\"\n}\n";
    let s = setup(hcl, fake(false));
    let plan = plan_with(&s, &State::new(), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.c[0]"), Action::Create);
    let c1 = plan.change(&"fake_thing.c[1]".parse().unwrap()).unwrap();
    assert_eq!(c1.config.get_attr("name"), &Value::string("n1"));
}

#[test]
fn prevent_destroy_stops_a_replace() {
    let hcl = "resource \"fake_thing\" \"a\" {\n  name = \"new\"\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n";
    let s = setup(hcl, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "old", "size": null, "id": "x"}), InstanceStatus::Ready);
    let errors = plan_with(&s, &state, false).unwrap_err();
    assert!(errors[0].to_string().contains("cannot be destroyed"), "{}", errors[0]);
}

#[test]
fn a_data_source_after_a_block_that_loses_an_instance_is_read_during_apply() {
    // `a` keeps a[0] as it is and deletes a[1]: a change of `a` all the
    // same, so `d`, which depends on it, is read once the delete is done.
    let hcl = "resource \"fake_thing\" \"a\" {\n  count = 1\n  name = \"n\"\n}\n\
               data \"fake_thing\" \"d\" {\n  name = \"d-${length(fake_thing.a)}\"\n}\n";
    let s = setup(hcl, fake(false));
    let mut state = State::new();
    for i in 0..2 {
        let attrs = serde_json::json!({"name": "n", "size": null, "id": format!("id-{i}")});
        state.set(InstanceState::new(format!("fake_thing.a[{i}]").parse().unwrap(), "fake", 0, attrs));
    }
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a[0]"), Action::NoOp);
    assert_eq!(action_of(&plan, "fake_thing.a[1]"), Action::Delete);
    assert_eq!(action_of(&plan, "data.fake_thing.d"), Action::Read);
}
