//! The applier with an in-process provider: what is on disk when.

use std::sync::Mutex;

use super::*;
use crate::provider::{CallResult, PlanRequest, PlanResponse, ReadResponse};
use crate::schema::{Attribute, Block, ProviderSchema};
use crate::value::Type;

/// `fake_thing`: `name`, `deps` (list of strings), computed `id`. Its apply
/// reads the state file and records which of the thing's `deps` it found.
struct Watcher {
    schema: ProviderSchema,
    state_file: std::path::PathBuf,
    /// (name, deps, deps found in the state file at the time of its create)
    seen: Mutex<Vec<(String, Vec<String>, Vec<String>)>>,
}

impl Watcher {
    fn new(state_file: std::path::PathBuf) -> Watcher {
        let attr = |ty: Type, required: bool, computed: bool| Attribute {
            ty,
            required,
            optional: !required && !computed,
            computed,
            sensitive: false,
            description: String::new(),
        };
        let block = Block {
            attributes: [
                ("name".to_string(), attr(Type::String, true, false)),
                ("deps".to_string(), attr(Type::List(Box::new(Type::String)), false, false)),
                ("id".to_string(), attr(Type::String, false, true)),
            ]
            .into(),
            ..Block::default()
        };
        let schema = ProviderSchema {
            resources: [("fake_thing".to_string(), Schema { version: 0, block })].into(),
            ..ProviderSchema::default()
        };
        Watcher { schema, state_file, seen: Mutex::new(Vec::new()) }
    }
}

impl Provider for Watcher {
    fn name(&self) -> &str {
        "fake"
    }
    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }
    fn validate_resource(&self, _: &str, _: &Value) -> CallResult<Vec<Diagnostic>> {
        Ok(Vec::new())
    }
    fn plan_resource(&self, r: PlanRequest) -> CallResult<PlanResponse> {
        let mut planned = r.proposed_new_state;
        if let Value::Object(m) = &mut planned
            && m.get("id").is_none_or(Value::is_null)
        {
            m.insert("id".into(), Value::Unknown);
        }
        Ok(PlanResponse { planned_state: planned, ..PlanResponse::default() })
    }
    fn apply_resource(&self, r: ApplyRequest) -> CallResult<crate::provider::ApplyResponse> {
        let mut state = r.planned_state;
        let on_disk = std::fs::read_to_string(&self.state_file).unwrap_or_default();
        if let Value::Object(m) = &mut state {
            let name = m["name"].as_str().unwrap().to_string();
            let deps: Vec<String> = match &m["deps"] {
                Value::List(v) => v.iter().map(|d| d.as_str().unwrap().to_string()).collect(),
                _ => Vec::new(),
            };
            let found = deps.iter().filter(|d| on_disk.contains(&format!("\"id\": \"{d}\""))).cloned().collect();
            self.seen.lock().unwrap().push((name.clone(), deps, found));
            m.insert("id".into(), Value::string(name));
        }
        Ok(crate::provider::ApplyResponse { new_state: state, ..Default::default() })
    }
    fn read_resource(&self, _: &str, current: &Value, private: &[u8]) -> CallResult<ReadResponse> {
        Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() })
    }
    fn read_data_source(&self, _: &str, c: &Value) -> CallResult<(Value, Vec<Diagnostic>)> {
        Ok((c.clone(), Vec::new()))
    }
    fn upgrade_state(&self, _: &str, _: u64, _: &str) -> CallResult<(Value, Vec<Diagnostic>)> {
        unreachable!("no upgrades")
    }
}

struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _: Event) {}
    fn diagnostic(&self, _: &Diagnostic) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dependency_is_on_disk_before_its_dependents_start() {
    // Fans of independent things finishing together, each feeding the next
    // level: writes are grouped, and still no dependent starts early.
    let mut hcl = String::new();
    for level in 0..4 {
        for i in 0..12 {
            let deps: Vec<String> = if level == 0 {
                Vec::new()
            } else {
                vec![
                    format!("fake_thing.l{}_{i}.id", level - 1),
                    format!("fake_thing.l{}_{}.id", level - 1, (i + 1) % 12),
                ]
            };
            hcl.push_str(&format!(
                "resource \"fake_thing\" \"l{level}_{i}\" {{\n  name = \"l{level}_{i}\"\n  deps = [{}]\n}}\n",
                deps.join(", ")
            ));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let config = config::load(dir.path()).unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
    let graph = DependencyGraph::build(&config).unwrap();
    let state_file = dir.path().join("state.json");
    let watcher = Arc::new(Watcher::new(state_file.clone()));
    let provider: Arc<dyn Provider> = watcher.clone();
    let providers: Providers = [("fake".to_string(), provider)].into();
    let state = State::new();
    let planner = plan::Planner {
        config: &config,
        graph: &graph,
        providers: &providers,
        state: &state,
        variables: BTreeMap::new(),
        options: plan::PlanOptions::default(),
    };
    let plan = planner.plan().unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
    let applier = Applier {
        config: config.clone(),
        graph,
        providers,
        plan,
        variables: BTreeMap::new(),
        parallelism: 12,
        events: Arc::new(Quiet),
    };
    let backend = LocalBackend::open(&state_file).unwrap();
    let (report, state) = applier.apply(state, backend).await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.added, 48);
    let seen = watcher.seen.lock().unwrap();
    assert_eq!(seen.len(), 48);
    for (name, deps, found) in seen.iter() {
        assert_eq!(deps, found, "{name} started before its dependencies were written");
    }
    let on_disk = LocalBackend::open_read_only(&state_file).read().unwrap();
    assert_eq!(on_disk.resources.len(), 48);
    assert_eq!(on_disk.serial, state.serial, "the state returned is the one on disk");
}
