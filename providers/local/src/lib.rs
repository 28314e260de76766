//! The `local` provider: files on the machine running cairn, like
//! Terraform's `local` provider.
//!
//! - resource `local_file`: writes `content` (or the bytes of
//!   `content_base64`) to `filename`, creating parent directories; its `id`
//!   is the SHA-1 of the bytes, in lowercase hex. Every argument forces a
//!   replacement. Deleting removes the file, unless it no longer holds what
//!   the resource wrote (then it is left, with a warning).
//!   `file_permission` (default `"0777"`) is set on the file, and
//!   `directory_permission` (the same default) on the directories the
//!   resource creates, through the host's `files` import (WASI 0.2 has no
//!   chmod). As in Terraform, which creates them with these modes, the
//!   umask of the cairn process clears its bits from both: `"0777"` under
//!   umask `022` gives `0755`, so the default is not world-writable.
//! - resource `local_sensitive_file`: the same, but `content` and
//!   `content_base64` are sensitive (never shown in plans) and both
//!   permissions default to `"0700"`, as Terraform's.
//! - import of `local_file` and `local_sensitive_file`: the id is the file's path; the content is
//!   read back (as `content`, or `content_base64` when it is not UTF-8).
//! - data source `local_file`: reads `filename` into `content`,
//!   `content_base64` and `id`.
//!
//! The provider sees only the directories the operator grants it, under the
//! same relative paths as in the configuration (`out/site.txt` with a grant
//! of `./out`), so paths are used exactly as written.

#![warn(missing_docs)]

use std::io;
use std::path::Path as FsPath;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, Path, PlanRequest, PlanResponse, Provider, ProviderSchema,
    ReadRequest, Schema, Value,
};
use sha1::{Digest, Sha1};

/// The provider; it has no configuration.
pub struct Local;

/// Terraform's default for both permission attributes of a `local_file`.
const DEFAULT_PERMISSION: &str = "0777";
/// … and of a `local_sensitive_file`.
const SENSITIVE_PERMISSION: &str = "0700";

/// The default permissions of a resource type.
fn default_permission(type_name: &str) -> &'static str {
    if type_name == "local_sensitive_file" { SENSITIVE_PERMISSION } else { DEFAULT_PERMISSION }
}

/// The schema of `local_file` (`sensitive` false) or `local_sensitive_file`.
fn file_schema(sensitive: bool) -> Schema {
    let default = if sensitive { SENSITIVE_PERMISSION } else { DEFAULT_PERMISSION };
    let perm = |what: &str| {
        Attr::string().optional().computed().description(format!(
            "Permissions of the {what} as an octal string, default \"{default}\". As in Terraform, the \
             umask of the cairn process clears its bits (\"0777\" under umask 022 gives 0755)."
        ))
    };
    let secret = |attr: Attr| if sensitive { attr.sensitive() } else { attr };
    Schema::new(0)
        .description(if sensitive {
            "A file with the given content, which is never shown."
        } else {
            "A file with the given content."
        })
        .attribute("filename", Attr::string().required().description("Path of the file to write."))
        .attribute("content", secret(Attr::string().optional().description("Text to write.")))
        .attribute("content_base64", secret(Attr::string().optional().description("Bytes to write, base64.")))
        .attribute("file_permission", perm("file"))
        .attribute("directory_permission", perm("directories created"))
        .attribute("id", Attr::string().computed().description("SHA-1 of the content, hex."))
}

impl Provider for Local {
    fn schema() -> ProviderSchema {
        ProviderSchema::new()
            .resource("local_file", file_schema(false))
            .resource("local_sensitive_file", file_schema(true))
            .data_source(
                "local_file",
                Schema::new(0)
                    .description("Reads a file.")
                    .attribute("filename", Attr::string().required().description("Path of the file to read."))
                    .attribute("content", Attr::string().computed().description("The content, as text."))
                    .attribute("content_base64", Attr::string().computed().description("The content, base64."))
                    .attribute("id", Attr::string().computed().description("SHA-1 of the content, hex.")),
            )
    }

    fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Local)
    }

    fn validate(&self, _type_name: &str, config: &Value) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let (text, b64) = (config.get_attr("content"), config.get_attr("content_base64"));
        if text.is_null() == b64.is_null() {
            out.push(Diagnostic::error("Exactly one of `content` and `content_base64` must be set"));
        }
        if let Some(s) = b64.as_str()
            && let Err(e) = BASE64.decode(s)
        {
            out.push(Diagnostic::error("Invalid base64").detail(e.to_string()).at(Path::attr("content_base64")));
        }
        for name in ["file_permission", "directory_permission"] {
            if let Some(mode) = config.get_attr(name).as_str()
                && u32::from_str_radix(mode, 8).map_or(true, |m| m > 0o777)
            {
                out.push(
                    Diagnostic::error(format!("Bad mode {mode:?}"))
                        .detail("Must be three or four octal digits, at most 0777.")
                        .at(Path::attr(name)),
                );
            }
        }
        out
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        let permission = default_permission(&req.type_name);
        let resp = PlanResponse::from_proposed(&req)
            .default("file_permission", permission)
            .default("directory_permission", permission)
            .requires_replace(["filename", "content", "content_base64", "file_permission", "directory_permission"]);
        // The id depends only on the content, so it is known whenever the
        // content is: dependents can plan with it.
        Ok(match desired_bytes(&resp.planned_state) {
            Some(bytes) => resp.set("id", sha1_hex(&bytes)),
            None => resp,
        })
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        let filename = req.planned_state.get_attr("filename").as_str().unwrap_or_default().to_owned();
        if req.is_delete() {
            return delete(&req.prior_state);
        }
        let bytes = desired_bytes(&req.planned_state)
            .ok_or_else(|| Diagnostic::error("No content to write").detail("Set `content` or `content_base64`."))?;
        let file_mode = mode(&req.planned_state, "file_permission", &req.type_name);
        let dir_mode = mode(&req.planned_state, "directory_permission", &req.type_name);
        let created = missing_directories(FsPath::new(&filename));
        if let Some(dir) = created.first() {
            std::fs::create_dir_all(dir)
                .map_err(|e| io_error("create the directory of", &filename, &e, "read_write"))?;
        }
        write_with_mode(&filename, &bytes, file_mode)?;
        cairn_sdk::log!(info, "wrote {} bytes to {filename}", bytes.len());
        let mut state = req.planned_state.clone();
        state.set_attr("id", sha1_hex(&bytes));
        // Last, and the deepest first: a mode without search permission
        // on a directory would stop the changes below it.
        for dir in &created {
            if let Err(e) = cairn_sdk::files::set_permissions(dir, dir_mode) {
                // The file exists: the state records it (tainted), so that
                // the next apply replaces it.
                let mut response = ApplyResponse::new(state);
                response.diagnostics.push(permission_error(&dir.display().to_string(), &e, "directory_permission"));
                return Ok(response);
            }
        }
        Ok(ApplyResponse::new(state))
    }

    fn read(&self, req: ReadRequest) -> Result<Option<Value>, Vec<Diagnostic>> {
        let mut state = req.current_state;
        let filename = state.get_attr("filename").as_str().unwrap_or_default().to_owned();
        let bytes = match std::fs::read(&filename) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("read", &filename, &e, "read_write").into()),
        };
        // Put what is on disk where the configuration says what should be,
        // so that a changed file plans as a replacement.
        let id = sha1_hex(&bytes);
        if state.get_attr("id").as_str() != Some(id.as_str()) {
            if state.get_attr("content").is_null() {
                state.set_attr("content_base64", BASE64.encode(&bytes));
            } else {
                state.set_attr("content", String::from_utf8_lossy(&bytes).into_owned());
            }
            state.set_attr("id", id);
        }
        Ok(Some(state))
    }

    /// Adopts an existing file: the id is its path (as the configuration
    /// would write `filename`); the content is read back as text, or as
    /// base64 when it is not UTF-8.
    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        let bytes = std::fs::read(id).map_err(|e| io_error("read", id, &e, "read_only"))?;
        let (content, content_base64) = match String::from_utf8(bytes.clone()) {
            Ok(text) => (Value::from(text), Value::Null),
            Err(_) => (Value::Null, Value::from(BASE64.encode(&bytes))),
        };
        Ok(Value::object([
            ("filename", Value::from(id)),
            ("content", content),
            ("content_base64", content_base64),
            ("file_permission", Value::from(default_permission(type_name))),
            ("directory_permission", Value::from(default_permission(type_name))),
            ("id", Value::from(sha1_hex(&bytes))),
        ]))
    }

    fn read_data_source(&self, _type_name: &str, config: Value) -> Result<Value, Vec<Diagnostic>> {
        let filename = config.get_attr("filename").as_str().unwrap_or_default().to_owned();
        let bytes = std::fs::read(&filename).map_err(|e| io_error("read", &filename, &e, "read_only"))?;
        let mut state = config;
        state.set_attr("content", String::from_utf8_lossy(&bytes).into_owned());
        state.set_attr("content_base64", BASE64.encode(&bytes));
        state.set_attr("id", sha1_hex(&bytes));
        Ok(state)
    }
}

/// Delete the file of a `local_file` state.
///
/// A file already gone is success. A file whose content is no longer the
/// state's is left alone: with `create_before_destroy` and an unchanged
/// `filename`, the replacement has just written the same path.
fn delete(prior: &Value) -> Result<ApplyResponse, Vec<Diagnostic>> {
    let filename = prior.get_attr("filename").as_str().unwrap_or_default();
    let bytes = match std::fs::read(filename) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ApplyResponse::deleted()),
        Err(e) => return Err(io_error("read", filename, &e, "read_write").into()),
    };
    let mut resp = ApplyResponse::deleted();
    if prior.get_attr("id").as_str() == Some(sha1_hex(&bytes).as_str()) {
        std::fs::remove_file(filename).map_err(|e| io_error("delete", filename, &e, "read_write"))?;
    } else {
        resp.diagnostics.push(
            Diagnostic::warning(format!("Left {filename} in place"))
                .detail("Its content is no longer what this resource wrote: something else now owns the file."),
        );
    }
    Ok(resp)
}

/// Writes `bytes` to `filename` with the permission bits `mode` (less the
/// umask). The file is created empty and its mode set before the content
/// goes in, so that a secret is never readable under the default mode; when
/// the mode cannot be set, the empty file is removed again.
fn write_with_mode(filename: &str, bytes: &[u8], mode: u32) -> Result<(), Vec<Diagnostic>> {
    use std::io::Write as _;
    let mut file = std::fs::File::create(filename).map_err(|e| io_error("write", filename, &e, "read_write"))?;
    if let Err(e) = cairn_sdk::files::set_permissions(filename, mode) {
        drop(file);
        let _ = std::fs::remove_file(filename);
        return Err(permission_error(filename, &e, "file_permission").into());
    }
    // The handle was opened for writing before the mode changed: a mode
    // without write permission (`0400`) still lets this write go in.
    file.write_all(bytes).map_err(|e| io_error("write", filename, &e, "read_write"))?;
    Ok(())
}

/// The permission bits the planned attribute `name` asks for; the type's
/// default when it is not a valid mode (validation refuses those).
fn mode(planned: &Value, name: &str, type_name: &str) -> u32 {
    let parse = |text: &str| u32::from_str_radix(text, 8).ok().filter(|m| *m <= 0o777);
    let default = parse(default_permission(type_name)).unwrap_or(0o700);
    planned.get_attr(name).as_str().and_then(parse).unwrap_or(default)
}

/// The directories that writing `filename` must create, deepest first:
/// its parent and every ancestor that does not exist yet. Only these get
/// `directory_permission`, as Terraform's `MkdirAll` gives its mode only to
/// the directories it makes.
fn missing_directories(filename: &FsPath) -> Vec<std::path::PathBuf> {
    filename
        .ancestors()
        .skip(1)
        .take_while(|dir| !dir.as_os_str().is_empty() && !dir.is_dir())
        .map(FsPath::to_path_buf)
        .collect()
}

/// A permission change the host (or the file system) refused.
fn permission_error(path: &str, message: &str, attribute: &str) -> Diagnostic {
    Diagnostic::error(format!("Cannot set the permissions of {path}")).detail(message).at(Path::attr(attribute))
}

/// The bytes a `local_file` state says the file holds, when known.
fn desired_bytes(state: &Value) -> Option<Vec<u8>> {
    match (state.get_attr("content").as_str(), state.get_attr("content_base64").as_str()) {
        (Some(text), _) => Some(text.as_bytes().to_vec()),
        (None, Some(b64)) => BASE64.decode(b64).ok(),
        (None, None) => None,
    }
}

/// Lowercase hex SHA-1, Terraform's `local_file` id.
fn sha1_hex(bytes: &[u8]) -> String {
    hex::encode(Sha1::digest(bytes))
}

/// An I/O failure as a diagnostic. Missing or refused paths are most often
/// a directory the operator has not granted, so say how to grant it.
fn io_error(action: &str, filename: &str, err: &io::Error, grant: &str) -> Diagnostic {
    let d = Diagnostic::error(format!("Cannot {action} {filename}: {err}")).at(Path::attr("filename"));
    match err.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            let dir = FsPath::new(filename).parent().map(|p| p.display().to_string()).filter(|p| !p.is_empty());
            d.detail(format!(
                "The provider sees only the directories the operator grants it. If the path is right, grant its \
                 directory in the provider's sandbox block: provider \"local\" {{ sandbox {{ {grant} = [\"{}\"] }} }}",
                dir.as_deref().unwrap_or(".")
            ))
        }
        _ => d,
    }
}

cairn_sdk::export_provider!(Local, name = "local");

#[cfg(test)]
mod tests {
    use super::*;

    fn file(filename: &str, content: &str) -> Value {
        Value::object([
            ("filename", Value::from(filename)),
            ("content", Value::from(content)),
            ("content_base64", Value::Null),
            ("file_permission", Value::Null),
            ("directory_permission", Value::Null),
            ("id", Value::Null),
        ])
    }

    fn plan(prior: Value, config: Value) -> PlanResponse {
        let schema = Local::schema().resource_schema("local_file").unwrap().clone();
        Local.plan(PlanRequest::proposed("local_file", schema, prior, config)).unwrap()
    }

    fn apply(prior: Value, planned: Value) -> Result<ApplyResponse, Vec<Diagnostic>> {
        Local.apply(ApplyRequest {
            type_name: "local_file".into(),
            schema: Local::schema().resource_schema("local_file").unwrap().clone().into(),
            prior_state: prior,
            config: planned.clone(),
            planned_state: planned,
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        })
    }

    #[test]
    fn schema_is_well_formed() {
        Local::schema().check().unwrap();
    }

    #[test]
    fn a_sensitive_file_hides_its_content_and_is_private_by_default() {
        let schema = Local::schema().resource_schema("local_sensitive_file").unwrap().clone();
        assert!(schema.is_sensitive("content") && schema.is_sensitive("content_base64"));
        assert!(!Local::schema().resource_schema("local_file").unwrap().is_sensitive("content"));
        let planned = Local
            .plan(PlanRequest::proposed("local_sensitive_file", schema, Value::Null, file("s.txt", "secret")))
            .unwrap()
            .planned_state;
        assert_eq!(planned.get_attr("file_permission").as_str(), Some("0700"));
        assert_eq!(planned.get_attr("directory_permission").as_str(), Some("0700"));
        assert_eq!(planned.get_attr("id").as_str(), Some(sha1_hex(b"secret").as_str()));
    }

    #[test]
    fn id_is_lowercase_sha1_hex() {
        assert_eq!(sha1_hex(b"hello"), "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d");
    }

    #[test]
    fn plan_defaults_permissions_and_predicts_the_id() {
        let p = plan(Value::Null, file("out/a.txt", "hello")).planned_state;
        assert_eq!(p.get_attr("file_permission").as_str(), Some("0777"));
        assert_eq!(p.get_attr("id").as_str(), Some("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"));
        let mut unknown = file("out/a.txt", "x");
        unknown.set_attr("content", Value::unknown());
        assert!(plan(Value::Null, unknown).planned_state.get_attr("id").is_unknown());
    }

    #[test]
    fn changed_content_forces_replacement_and_same_content_is_a_no_op() {
        let prior = plan(Value::Null, file("a.txt", "one")).planned_state;
        let same = plan(prior.clone(), file("a.txt", "one"));
        assert_eq!(same.planned_state, prior);
        let changed = plan(prior, file("a.txt", "two"));
        assert!(changed.requires_replace.contains(&Path::attr("content")));
        assert_eq!(changed.planned_state.get_attr("id").as_str(), Some(sha1_hex(b"two").as_str()));
    }

    #[test]
    fn validate_wants_exactly_one_content_and_octal_modes() {
        let mut both = file("a", "x");
        both.set_attr("content_base64", "eA==");
        assert_eq!(Local.validate("local_file", &both).len(), 1);
        let mut bad_mode = file("a", "x");
        bad_mode.set_attr("file_permission", "0999");
        assert!(Local.validate("local_file", &bad_mode)[0].summary.contains("0999"));
        assert!(Local.validate("local_file", &file("a", "x")).is_empty());
    }

    #[test]
    fn apply_read_and_delete_a_real_file() {
        let dir = std::env::temp_dir().join(format!("cairn-local-test-{}", std::process::id()));
        let name = dir.join("sub/site.txt").display().to_string();
        let planned = plan(Value::Null, file(&name, "hi")).planned_state;
        let state = apply(Value::Null, planned).unwrap().new_state;
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "hi");
        assert!(state.is_known());

        let read = |s: &Value| {
            Local.read(ReadRequest {
                type_name: "local_file".into(),
                schema: Schema::new(0).into(),
                current_state: s.clone(),
                private: Vec::new(),
            })
        };
        assert_eq!(read(&state).unwrap().as_ref(), Some(&state));
        std::fs::write(&name, "edited").unwrap();
        let drifted = read(&state).unwrap().unwrap();
        assert_eq!(drifted.get_attr("content").as_str(), Some("edited"));
        assert_eq!(drifted.get_attr("id").as_str(), Some(sha1_hex(b"edited").as_str()));

        // The old state no longer describes the file (as after a
        // create_before_destroy replacement on the same path): leave it.
        let kept = apply(state.clone(), Value::Null).unwrap();
        assert!(kept.new_state.is_null() && !kept.diagnostics[0].is_error());
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "edited");

        let deleted = apply(drifted.clone(), Value::Null).unwrap();
        assert!(deleted.new_state.is_null() && deleted.diagnostics.is_empty());
        assert!(read(&drifted).unwrap().is_none(), "a deleted file is gone, not an error");
        assert!(apply(drifted, Value::Null).is_ok(), "deleting twice is fine");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn permissions_go_on_the_file_and_on_the_directories_it_creates() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("cairn-local-modes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let name = dir.join("a/b/key.txt").display().to_string();
        let mut config = file(&name, "secret");
        config.set_attr("file_permission", "0600");
        config.set_attr("directory_permission", "0750");
        let planned = plan(Value::Null, config).planned_state;
        apply(Value::Null, planned).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // The test process's umask may clear bits too, as it would cairn's.
        let umask = 0o777 & !mode_after_umask(&dir);
        assert_eq!(mode(std::path::Path::new(&name)), 0o600 & !umask);
        assert_eq!(mode(&dir.join("a/b")), 0o750 & !umask);
        assert_eq!(mode(&dir.join("a")), 0o750 & !umask);
        assert_eq!(mode(&dir), 0o755, "a directory that existed is left as it was");
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "secret");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The mode a new directory created with `0777` gets in `parent`: `0777`
    /// less the process's umask.
    fn mode_after_umask(parent: &std::path::Path) -> u32 {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        let probe = parent.join("umask-probe");
        std::fs::DirBuilder::new().mode(0o777).create(&probe).unwrap();
        let mode = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        std::fs::remove_dir(probe).unwrap();
        mode
    }

    #[test]
    fn import_reads_a_file_back_and_plans_no_change() {
        let dir = std::env::temp_dir().join(format!("cairn-local-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        std::fs::write(&path, "hello").unwrap();
        let name = path.to_str().unwrap();
        let imported = Local.import("local_file", name).unwrap();
        assert_eq!(imported.get_attr("content").as_str(), Some("hello"));
        assert_eq!(imported.get_attr("id").as_str(), Some(sha1_hex(b"hello").as_str()));
        // The configuration of the same file plans a no-op over it.
        let planned = plan(imported.clone(), file(name, "hello"));
        assert_eq!(planned.planned_state, imported);
        assert!(Local.import("local_file", dir.join("missing").to_str().unwrap()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn data_source_reads_content_and_explains_missing_files() {
        let missing = Local.read_data_source("local_file", Value::object([("filename", "no/such/file")]));
        let err = &missing.unwrap_err()[0];
        assert!(err.summary.contains("no/such/file"));
        assert!(err.detail.contains("read_only = [\"no/such\"]"), "{}", err.detail);
    }
}
