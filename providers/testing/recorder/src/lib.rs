//! The `recorder` test provider: objects that are files in a directory the
//! operator grants, and a log of every operation, so that tests can see
//! what the host did and in which order, and make operations fail.
//!
//! Provider block: `dir` (default `"log"`), the granted read-write
//! directory it works in.
//!
//! Resource `recorder_thing`:
//! - `name` (required; a change replaces the object), `keeper` (optional;
//!   a change replaces the object), `value` (optional; changes in place),
//!   `sleep_ms` (optional; every create, update and delete sleeps that
//!   long, after writing the empty file `<dir>/under-way/<name>`, so that
//!   a test can see which calls have started), computed `id`
//!   (`<name>-<8 random hex digits>`, new for every object).
//! - An object exists while the file `<dir>/objects/<id>` does; refresh
//!   reports it gone when that file is missing, and deleting a missing
//!   object succeeds ("already gone").
//! - Every operation appends one line to `<dir>/ops.log`:
//!   `<op> <name> <id> <idempotency key>`, op being `create`, `update`,
//!   `delete`, `delete-gone` or `fail-create`, `fail-update`, `fail-delete`.
//! - The file `<dir>/fail-<op>-<name>` (op `create`, `update` or `delete`)
//!   makes that operation fail with an error, without changing anything.
//! - A create first writes `<dir>/keys/<idempotency key>`, the new object
//!   as JSON, then the object: `import` with an idempotency key as the id
//!   finds the object that create made while it exists (the convention by
//!   which cairn recovers an interrupted create; see
//!   `docs/writing-providers.md`).
//! - `secret_wo` (optional, write-only): accepted and never stored, so
//!   that ephemeral values have somewhere to go.
//!
//! Ephemeral resource `recorder_lease` (an object opened for one run):
//! - `name` (required), `renew_ms` (optional: ask for a renewal that many
//!   milliseconds after each open or renewal), computed sensitive `token`
//!   (`token-<name>`).
//! - `open`, `renew` and `close` each append `<op> <name> - -` to
//!   `<dir>/ops.log`; the file `<dir>/fail-open-<name>` makes the open
//!   fail (with an error about the attribute `name`); `open_sleep_ms` (optional) makes the open sleep that long after
//!   it logged, so that a run can be interrupted while it waits; the file
//!   `<dir>/fail-close-<name>` makes the close fail (logged `fail-close`).

#![warn(missing_docs)]

use std::io::Write as _;

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Block, Diagnostic, NestedBlock, OpenResponse, PlanRequest, PlanResponse,
    Provider, ProviderSchema, ReadRequest, RenewResponse, Schema, Value,
};

/// The provider, with its working directory.
pub struct Recorder {
    dir: String,
}

impl Provider for Recorder {
    fn schema() -> ProviderSchema {
        ProviderSchema::new()
            .provider(Schema::new(0).attribute(
                "dir",
                Attr::string().optional().description("The granted directory to work in; default \"log\"."),
            ))
            .resource(
                "recorder_thing",
                Schema::new(0)
                    .description("An object recorded as a file; every operation is logged.")
                    .attribute("name", Attr::string().required().description("Changing it replaces the object."))
                    .attribute("keeper", Attr::string().optional().description("Changing it replaces the object."))
                    .attribute("value", Attr::string().optional().description("Changes in place."))
                    .attribute("sleep_ms", Attr::number().optional().description("Sleep this long in every apply."))
                    .attribute("id", Attr::string().computed().description("<name>-<random hex>, new per object."))
                    .attribute(
                        "secret_wo",
                        Attr::string().optional().sensitive().write_only().description("Accepted, never stored."),
                    )
                    .block(
                        "tag",
                        NestedBlock::list(
                            Block::new()
                                .description("A tag, kept in state; changing tags changes the object in place.")
                                .attribute("name", Attr::string().required()),
                        ),
                    ),
            )
            .ephemeral_resource(
                "recorder_lease",
                Schema::new(0)
                    .description("An object opened for one run; open, renew and close are logged.")
                    .attribute("name", Attr::string().required().description("Named in the log."))
                    .attribute("renew_ms", Attr::number().optional().description("Renew this long after each open."))
                    .attribute("open_sleep_ms", Attr::number().optional().description("Sleep this long in the open."))
                    .attribute("token", Attr::string().computed().sensitive().description("token-<name>.")),
            )
    }

    fn open_ephemeral(&self, type_name: &str, config: Value) -> Result<OpenResponse, Vec<Diagnostic>> {
        if type_name != "recorder_lease" {
            return Err(Diagnostic::error(format!("Unknown ephemeral resource type `{type_name}`")).into());
        }
        let name = config.get_attr("name").as_str().unwrap_or_default().to_owned();
        if std::fs::metadata(format!("{}/fail-open-{name}", self.dir)).is_ok() {
            self.log("fail-open", &name, "-", "-")?;
            // About `name`, so that the host reports it at that attribute.
            return Err(Diagnostic::error(format!("recorder: open of {name} failed, as asked"))
                .at(cairn_sdk::Path::attr("name"))
                .into());
        }
        self.log("open", &name, "-", "-")?;
        if let Some(ms) = config.get_attr("open_sleep_ms").as_i64().filter(|ms| *ms > 0) {
            std::thread::sleep(std::time::Duration::from_millis(ms as u64));
        }
        let mut result = config.clone();
        result.set_attr("token", format!("token-{name}"));
        let private = lease_private(&name, config.get_attr("renew_ms").as_i64());
        let opened = OpenResponse::new(result).private(private.clone());
        Ok(match renew_at(&private) {
            Some(at) => opened.renew_at(at),
            None => opened,
        })
    }

    fn renew_ephemeral(&self, _type_name: &str, private: &[u8]) -> Result<RenewResponse, Vec<Diagnostic>> {
        let (name, _) = lease_of(private);
        self.log("renew", &name, "-", "-")?;
        Ok(RenewResponse { private: private.to_vec(), renew_at: renew_at(private) })
    }

    fn close_ephemeral(&self, _type_name: &str, private: &[u8]) -> Result<(), Vec<Diagnostic>> {
        let (name, _) = lease_of(private);
        if std::fs::metadata(format!("{}/fail-close-{name}", self.dir)).is_ok() {
            self.log("fail-close", &name, "-", "-")?;
            return Err(Diagnostic::error(format!("recorder: close of {name} failed, as asked")).into());
        }
        self.log("close", &name, "-", "-")
    }

    fn configure(config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Recorder { dir: config.get_attr("dir").as_str().unwrap_or("log").to_owned() })
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        Ok(PlanResponse::from_proposed(&req).requires_replace(["name", "keeper"]))
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        let sleep = req.planned_state.get_attr("sleep_ms").as_i64().or(req.prior_state.get_attr("sleep_ms").as_i64());
        if let Some(ms) = sleep.filter(|ms| *ms > 0) {
            let name = req.planned_state.get_attr("name").as_str().or(req.prior_state.get_attr("name").as_str());
            self.mark_under_way(name.unwrap_or_default())?;
            std::thread::sleep(std::time::Duration::from_millis(ms as u64));
        }
        let key = &req.idempotency_key;
        if req.is_delete() {
            let name = req.prior_state.get_attr("name").as_str().unwrap_or_default();
            let id = req.prior_state.get_attr("id").as_str().unwrap_or_default();
            self.fail_if("delete", name, id, key)?;
            let object = format!("{}/objects/{id}", self.dir);
            if std::fs::remove_file(&object).is_err() {
                self.log("delete-gone", name, id, key)?;
            } else {
                self.log("delete", name, id, key)?;
            }
            return Ok(ApplyResponse::deleted());
        }
        let name = req.planned_state.get_attr("name").as_str().unwrap_or_default().to_owned();
        let mut state = req.planned_state.clone();
        if req.is_create() {
            let id = format!("{name}-{}", random_hex());
            self.fail_if("create", &name, &id, key)?;
            state.set_attr("id", req.planned_or("id", || Value::from(id)));
        } else {
            let id = req.prior_state.get_attr("id").as_str().unwrap_or_default();
            self.fail_if("update", &name, id, key)?;
        }
        let id = state.get_attr("id").as_str().unwrap_or_default().to_owned();
        if req.is_create() {
            // Before the object exists, so that whatever a crash leaves
            // can be found by the key.
            self.remember_key(key, &state)?;
        }
        let object = format!("{}/objects/{id}", self.dir);
        std::fs::create_dir_all(format!("{}/objects", self.dir)).map_err(|e| io_error(&object, e))?;
        std::fs::write(&object, state.get_attr("value").as_str().unwrap_or_default())
            .map_err(|e| io_error(&object, e))?;
        self.log(if req.is_create() { "create" } else { "update" }, &name, &id, key)?;
        Ok(ApplyResponse::new(state))
    }

    fn read(&self, req: ReadRequest) -> Result<Option<Value>, Vec<Diagnostic>> {
        let id = req.current_state.get_attr("id").as_str().unwrap_or_default();
        let exists = std::fs::metadata(format!("{}/objects/{id}", self.dir)).is_ok();
        Ok(exists.then_some(req.current_state))
    }

    /// Finds the object the create with idempotency key `id` made.
    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        let not_found = || Diagnostic::error(format!("recorder: no {type_name} was made with idempotency key {id:?}"));
        let path = format!("{}/keys/{id}", self.dir);
        let Ok(text) = std::fs::read_to_string(&path) else { return Err(not_found().into()) };
        let schema = Self::schema();
        let schema = schema.resource_schema(type_name).ok_or_else(not_found)?;
        let state = schema.state_from_json(&text)?;
        let object = format!("{}/objects/{}", self.dir, state.get_attr("id").as_str().unwrap_or_default());
        if std::fs::metadata(object).is_err() {
            return Err(not_found().into());
        }
        Ok(state)
    }
}

impl Recorder {
    /// Appends one line to the log.
    fn log(&self, op: &str, name: &str, id: &str, key: &str) -> Result<(), Vec<Diagnostic>> {
        let path = format!("{}/ops.log", self.dir);
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| io_error(&path, e))?;
        file.write_all(format!("{op} {name} {id} {key}\n").as_bytes()).map_err(|e| io_error(&path, e))?;
        Ok(())
    }

    /// Writes the empty file `<dir>/under-way/<name>`: a call for `name` has
    /// started.
    fn mark_under_way(&self, name: &str) -> Result<(), Vec<Diagnostic>> {
        let dir = format!("{}/under-way", self.dir);
        std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        let path = format!("{dir}/{name}");
        std::fs::write(&path, "").map_err(|e| io_error(&path, e))
    }

    /// Writes the object a create with idempotency key `key` is making to
    /// `<dir>/keys/<key>`.
    fn remember_key(&self, key: &str, state: &Value) -> Result<(), Vec<Diagnostic>> {
        let text = |name: &str| state.get_attr(name).as_str().map(str::to_owned);
        let json = serde_json::json!({
            "name": text("name"),
            "keeper": text("keeper"),
            "value": text("value"),
            "sleep_ms": state.get_attr("sleep_ms").as_i64(),
            "id": text("id"),
        });
        let path = format!("{}/keys/{key}", self.dir);
        std::fs::create_dir_all(format!("{}/keys", self.dir)).map_err(|e| io_error(&path, e))?;
        std::fs::write(&path, json.to_string()).map_err(|e| io_error(&path, e))
    }

    /// Fails (and logs `fail-<op>`) when the marker file for `op` on `name` exists.
    fn fail_if(&self, op: &str, name: &str, id: &str, key: &str) -> Result<(), Vec<Diagnostic>> {
        if std::fs::metadata(format!("{}/fail-{op}-{name}", self.dir)).is_ok() {
            self.log(&format!("fail-{op}"), name, id, key)?;
            return Err(Diagnostic::error(format!("recorder: {op} of {name} failed, as asked")).into());
        }
        Ok(())
    }
}

/// A lease's private bytes: `<renew_ms>\n<name>` (`-` for no renewal).
fn lease_private(name: &str, renew_ms: Option<i64>) -> Vec<u8> {
    let renew = renew_ms.map_or("-".to_string(), |ms| ms.to_string());
    format!("{renew}\n{name}").into_bytes()
}

/// The name and renewal period in a lease's private bytes.
fn lease_of(private: &[u8]) -> (String, Option<u64>) {
    let text = String::from_utf8_lossy(private);
    let (renew, name) = text.split_once('\n').unwrap_or(("-", &text));
    (name.to_string(), renew.parse().ok())
}

/// When a lease asks to be renewed next: its period from now.
fn renew_at(private: &[u8]) -> Option<u64> {
    let (_, period) = lease_of(private);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(u64::try_from(now.as_millis()).ok()?.saturating_add(period?))
}

fn io_error(path: &str, e: std::io::Error) -> Vec<Diagnostic> {
    Diagnostic::error(format!("recorder: {path}: {e}")).into()
}

/// 8 random hex digits from WASI random.
fn random_hex() -> String {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("WASI random is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

cairn_sdk::export_provider!(Recorder, name = "recorder");
cairn_sdk::export_ephemeral_resources!(Recorder);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_well_formed() {
        Recorder::schema().check().unwrap();
    }
}
