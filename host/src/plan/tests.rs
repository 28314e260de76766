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
    plan_options(s, state, PlanOptions { destroy, ..PlanOptions::default() })
}

/// Plans with `options`, after the configuration's `moved` blocks rebind
/// the state as the engine does.
fn plan_options(s: &Setup, state: &State, options: PlanOptions) -> Result<Plan, Vec<Diagnostic>> {
    let mut state = state.clone();
    let moves = apply_moves(&s.ws.config.moved, &mut state)?;
    let planner = Planner {
        config: Arc::clone(&s.ws.config),
        graph: Arc::clone(&s.ws.graph),
        providers: s.providers.clone(),
        late_providers: Default::default(),
        state: Arc::new(state),
        variables: BTreeMap::new(),
        options,
        moves,
        progress: Default::default(),
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

/// `a` and `b`, whose lifecycle has `replace_triggered_by = [TRIGGER]`.
fn triggered_config(trigger: &str) -> String {
    format!(
        "{ONE}resource \"fake_thing\" \"b\" {{\n  name = \"b\"\n  lifecycle {{\n    replace_triggered_by = [{trigger}]\n  }}\n}}\n"
    )
}

/// A state with `a` as given and `b` as configured.
fn state_of_a_and_b(a: serde_json::Value) -> State {
    let mut state = state_with("fake_thing.a", a, InstanceStatus::Ready);
    let b = serde_json::json!({"name": "b", "size": null, "id": "y"});
    state.set(InstanceState::new("fake_thing.b".parse().unwrap(), "fake", 0, b));
    state
}

#[test]
fn replace_triggered_by_a_resource_fires_on_its_update_or_replace_only() {
    let s = setup(&triggered_config("fake_thing.a"), fake(false));
    let unchanged = plan_with(&s, &state_of_a_and_b(serde_json::json!({"name": "n", "size": 1, "id": "x"})), false);
    assert_eq!(action_of(&unchanged.unwrap(), "fake_thing.b"), Action::NoOp);
    for a in
        [serde_json::json!({"name": "n", "size": 2, "id": "x"}), serde_json::json!({"name": "o", "size": 1, "id": "x"})]
    {
        let plan = plan_with(&s, &state_of_a_and_b(a), false).unwrap();
        let b = plan.change(&"fake_thing.b".parse().unwrap()).unwrap();
        assert_eq!(b.action, Action::Replace);
        assert_eq!(b.replace_reason, Some(ReplaceReason::Triggered("fake_thing.a".into())));
    }
    // A create of the referenced resource triggers nothing.
    let mut state = state_of_a_and_b(serde_json::json!({"name": "n", "size": 1, "id": "x"}));
    state.remove(&"fake_thing.a".parse().unwrap());
    assert_eq!(action_of(&plan_with(&s, &state, false).unwrap(), "fake_thing.b"), Action::NoOp);
}

#[test]
fn replace_triggered_by_an_attribute_fires_only_when_it_changes() {
    let s = setup(&triggered_config("fake_thing.a.name"), fake(false));
    // `a` is updated, but its name stays.
    let plan = plan_with(&s, &state_of_a_and_b(serde_json::json!({"name": "n", "size": 2, "id": "x"})), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::Update);
    assert_eq!(action_of(&plan, "fake_thing.b"), Action::NoOp);
    // `a` is replaced because its name changes.
    let plan = plan_with(&s, &state_of_a_and_b(serde_json::json!({"name": "o", "size": 1, "id": "x"})), false).unwrap();
    let b = plan.change(&"fake_thing.b".parse().unwrap()).unwrap();
    assert_eq!(b.replace_reason, Some(ReplaceReason::Triggered("fake_thing.a.name".into())));
}

#[test]
fn replace_triggered_by_picks_the_instance_with_count_index() {
    let hcl = "resource \"fake_thing\" \"a\" {\n  count = 2\n  name = \"a\"\n  size = 1\n}\n\
               resource \"fake_thing\" \"b\" {\n  count = 2\n  name = \"b\"\n  lifecycle {\n    \
               replace_triggered_by = [fake_thing.a[count.index].size]\n  }\n}\n";
    let s = setup(hcl, fake(false));
    let mut state = State::new();
    for i in 0..2 {
        let size = if i == 1 { 5 } else { 1 };
        let a = serde_json::json!({"name": "a", "size": size, "id": format!("a{i}")});
        state.set(InstanceState::new(format!("fake_thing.a[{i}]").parse().unwrap(), "fake", 0, a));
        let b = serde_json::json!({"name": "b", "size": null, "id": format!("b{i}")});
        state.set(InstanceState::new(format!("fake_thing.b[{i}]").parse().unwrap(), "fake", 0, b));
    }
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.b[0]"), Action::NoOp);
    assert_eq!(action_of(&plan, "fake_thing.b[1]"), Action::Replace);
}

#[test]
fn replace_option_replaces_an_unchanged_object_and_warns_about_unknown_addresses() {
    let s = setup(ONE, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "n", "size": 1, "id": "x"}), InstanceStatus::Ready);
    let replace = vec!["fake_thing.a".parse().unwrap(), "fake_thing.zz".parse().unwrap()];
    let plan = plan_options(&s, &state, PlanOptions { replace, ..PlanOptions::default() }).unwrap();
    let a = plan.change(&"fake_thing.a".parse().unwrap()).unwrap();
    assert_eq!((a.action, a.replace_reason.clone()), (Action::Replace, Some(ReplaceReason::Requested)));
    let unused: Vec<&Diagnostic> = plan.warnings.iter().filter(|w| w.summary == "Unused -replace option").collect();
    assert_eq!(unused.len(), 1);
    assert!(unused[0].detail.contains("fake_thing.zz"), "{}", unused[0].detail);
}

#[test]
fn target_plans_the_target_and_what_it_depends_on_only() {
    let hcl = format!(
        "{ONE}resource \"fake_thing\" \"b\" {{\n  name = fake_thing.a.name\n}}\nresource \"fake_thing\" \"c\" {{\n  name = \"c\"\n}}\n"
    );
    let s = setup(&hcl, fake(false));
    let targets = vec!["fake_thing.b".parse().unwrap()];
    let plan = plan_options(&s, &State::new(), PlanOptions { targets, ..PlanOptions::default() }).unwrap();
    let planned: Vec<String> = plan.changes.iter().map(|c| c.addr.to_string()).collect();
    assert_eq!(planned, ["fake_thing.a", "fake_thing.b"]);
    assert!(plan.warnings.iter().any(|w| w.summary == "Resource targeting is in effect"));
    // An orphan that is not targeted is not destroyed.
    let state =
        state_with("fake_thing.gone", serde_json::json!({"name": "g", "size": null, "id": "y"}), InstanceStatus::Ready);
    let targets = vec!["fake_thing.c".parse().unwrap()];
    let plan = plan_options(&s, &state, PlanOptions { targets, ..PlanOptions::default() }).unwrap();
    assert_eq!(plan.changes.iter().map(|c| c.addr.to_string()).collect::<Vec<_>>(), ["fake_thing.c"]);
}

#[test]
fn refresh_only_plans_no_action_whatever_the_configuration_says() {
    let s = setup(ONE, fake(false));
    let state =
        state_with("fake_thing.a", serde_json::json!({"name": "old", "size": 7, "id": "x"}), InstanceStatus::Ready);
    let plan = plan_options(&s, &state, PlanOptions { refresh_only: true, ..PlanOptions::default() }).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.a"), Action::NoOp);
    assert!(plan.refresh_only && !plan.has_changes(), "the fake's refresh finds no drift");
}

#[test]
fn a_moved_block_rebinds_the_object_and_plans_no_re_create() {
    let hcl = format!("{ONE}moved {{\n  from = fake_thing.old\n  to   = fake_thing.a\n}}\n");
    let s = setup(&hcl, fake(false));
    let state =
        state_with("fake_thing.old", serde_json::json!({"name": "n", "size": 1, "id": "x"}), InstanceStatus::Ready);
    let plan = plan_with(&s, &state, false).unwrap();
    let a = plan.change(&"fake_thing.a".parse().unwrap()).unwrap();
    assert_eq!((a.action, a.moved_from.clone()), (Action::NoOp, Some("fake_thing.old".parse().unwrap())));
    assert_eq!(plan.changes.len(), 1, "nothing is destroyed at the old address");
    assert!(plan.has_changes(), "the move itself changes the state");
}

#[test]
fn moves_follow_chains_and_refuse_to_land_on_an_object() {
    let moved = |from: &str, to: &str| format!("moved {{\n  from = {from}\n  to   = {to}\n}}\n");
    let hcl = format!("{ONE}{}{}", moved("fake_thing.x", "fake_thing.y"), moved("fake_thing.y", "fake_thing.a"));
    let s = setup(&hcl, fake(false));
    let attrs = serde_json::json!({"name": "n", "size": 1, "id": "x"});
    let state = state_with("fake_thing.x", attrs.clone(), InstanceStatus::Ready);
    let plan = plan_with(&s, &state, false).unwrap();
    assert_eq!(plan.moved, [Move { from: "fake_thing.x".parse().unwrap(), to: "fake_thing.a".parse().unwrap() }]);
    // `a` already has an object, which stays: the move is an error.
    let mut state = state;
    state.set(InstanceState::new("fake_thing.a".parse().unwrap(), "fake", 0, attrs));
    let errors = plan_with(&s, &state, false).unwrap_err();
    assert!(errors[0].summary.contains("Cannot move fake_thing.x to fake_thing.a"), "{}", errors[0]);
}

#[test]
fn a_removed_block_forgets_or_destroys() {
    let gone = || {
        state_with("fake_thing.gone", serde_json::json!({"name": "g", "size": null, "id": "y"}), InstanceStatus::Ready)
    };
    let forget = format!("{ONE}removed {{\n  from = fake_thing.gone\n  lifecycle {{\n    destroy = false\n  }}\n}}\n");
    let plan = plan_with(&setup(&forget, fake(false)), &gone(), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.gone"), Action::Forget);
    assert_eq!(plan.summary(), Summary { add: 1, forget: 1, ..Summary::default() });
    assert!(plan.warnings.iter().any(|w| w.summary.contains("no longer be managed")));
    let destroy = format!("{ONE}removed {{\n  from = fake_thing.gone\n}}\n");
    let plan = plan_with(&setup(&destroy, fake(false)), &gone(), false).unwrap();
    assert_eq!(action_of(&plan, "fake_thing.gone"), Action::Delete);
}

#[test]
fn target_with_a_key_plans_that_instance_only() {
    let hcl = "resource \"fake_thing\" \"c\" {\n  count = 3\n  name = \"n${count.index}\"\n}\n";
    let s = setup(hcl, fake(false));
    let targets = vec!["fake_thing.c[1]".parse().unwrap()];
    let plan = plan_options(&s, &State::new(), PlanOptions { targets, ..PlanOptions::default() }).unwrap();
    assert_eq!(plan.changes.iter().map(|c| c.addr.to_string()).collect::<Vec<_>>(), ["fake_thing.c[1]"]);
}

#[test]
fn destroy_with_a_target_destroys_it_and_what_depends_on_it() {
    let s = setup(ONE, fake(false));
    let mut state = State::new();
    for (name, deps) in [("a", vec![]), ("b", vec!["a"]), ("c", vec!["b"]), ("d", vec![])] {
        let attrs = serde_json::json!({"name": name, "size": null, "id": name});
        let dependencies = deps.iter().map(|d| crate::addr::ResourceAddr::managed("fake_thing", d)).collect();
        state.set(InstanceState {
            dependencies,
            ..InstanceState::new(format!("fake_thing.{name}").parse().unwrap(), "fake", 0, attrs)
        });
    }
    let targets = vec!["fake_thing.b".parse().unwrap()];
    let plan = plan_options(&s, &state, PlanOptions { destroy: true, targets, ..PlanOptions::default() }).unwrap();
    let mut destroyed: Vec<String> = plan.changes.iter().map(|c| c.addr.to_string()).collect();
    destroyed.sort();
    assert_eq!(destroyed, ["fake_thing.b", "fake_thing.c"]);
}
