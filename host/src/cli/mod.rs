//! The `cairn` command: argument parsing (clap, with Terraform's single-dash
//! flags accepted), then one file per command, each of which calls the
//! engine and renders what it returns (human text or `-json` lines).

mod apply;
mod check;
mod console;
mod fmt;
mod force_unlock;
mod graph;
mod import;
mod init;
mod input;
mod logging;
mod new;
mod output;
mod outputs;
mod plan;
mod plan_config_json;
mod plan_json;
mod providers;
mod render;
mod show;
mod state;
mod state_json;
mod taint;
mod test;
mod ui_json;
mod validate;
mod version;
mod workspace;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::VariableInput;
use crate::diag::Diagnostics;
use crate::engine::{Event, EventSink, RunOptions, Workspace};
pub use logging::init_logging;
use output::{CompactWarnings, Human, JsonLines, Live};
pub use plan_config_json::provider_full_name;

pub use crate::engine::STATE_FILE;
pub use render::{Colors, Schemas, render_plan, schemas_of};

/// cairn: infrastructure as code with sandboxed WebAssembly providers.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about)]
pub struct Cli {
    /// Switch to this directory before anything else, as Terraform's
    /// global `-chdir=DIR` does (`cairn -chdir=infra plan`): every path
    /// given after it is read from there.
    #[arg(long, value_name = "DIR")]
    chdir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Resolve the configuration's providers, check them, and write cairn.lock.
    Init {
        #[command(flatten)]
        common: Common,
        /// Lock the newest allowed version of each provider, even where
        /// another file is locked.
        #[arg(long)]
        upgrade: bool,
        /// `readonly`: check against cairn.lock without changing it; a
        /// provider missing from it is an error.
        #[arg(long, value_name = "MODE")]
        lockfile: Option<String>,
        /// Copy the state from the backend set up before to the one the
        /// configuration names now, keeping its lineage and serial.
        #[arg(long)]
        migrate_state: bool,
        /// Use the backend the configuration names as it is, leaving any
        /// state in the one set up before where it is.
        #[arg(long)]
        reconfigure: bool,
        /// How long to wait for a state's lock (e.g. 30s, 5m) while
        /// migrating.
        #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
        lock_timeout: Duration,
        /// Accepted as Terraform's `init -input=false` is in CI scripts:
        /// cairn's init asks nothing on the terminal, so it never asks
        /// whatever the value.
        #[command(flatten)]
        _input: InputFlags,
    },
    /// Check that the configuration is valid.
    Validate {
        #[command(flatten)]
        common: Common,
        /// Print the result as JSON, as `terraform validate -json` does.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate expressions against the configuration and its current
    /// state, as `terraform console` does: from a terminal one a line at
    /// a `> ` prompt; from a pipe (`echo 'var.x' | cairn console`) every
    /// line, printing the last one's value.
    Console {
        #[command(flatten)]
        common: Common,
        /// Evaluate against the values a new plan would make instead of
        /// the state's (nothing is saved).
        #[arg(long)]
        plan: bool,
    },
    /// Rewrite configuration files in the canonical style.
    Fmt {
        /// A directory (default: the current one) or one file.
        target: Option<PathBuf>,
        /// Change nothing; exit 3 when a file needs formatting.
        #[arg(long)]
        check: bool,
        /// Show the changes as a unified diff.
        #[arg(long)]
        diff: bool,
        /// Also format the files in subdirectories.
        #[arg(long)]
        recursive: bool,
        /// List the files whose formatting differs (`-list=false`: don't).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        list: bool,
        /// Write the formatted files (`-write=false`: don't).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
        write: bool,
    },
    /// Show what apply would do.
    Plan {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Exit with 2 when there are changes (0: none, 1: error).
        #[arg(long)]
        detailed_exitcode: bool,
        /// Plan to destroy everything.
        #[arg(long)]
        destroy: bool,
        /// Save the plan to FILE, for `cairn apply FILE` to apply exactly.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Create, update and destroy objects to match the configuration; or,
    /// given a plan file (`cairn apply FILE`), apply exactly that plan.
    Apply {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Do not ask for confirmation (`-auto-approve=false`: ask, as
        /// without the flag).
        #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
        auto_approve: bool,
        /// Destroy every object in the state, as `cairn destroy` does.
        #[arg(long)]
        destroy: bool,
    },
    /// Destroy every object in the state.
    Destroy {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Do not ask for confirmation (`-auto-approve=false`: ask, as
        /// without the flag).
        #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
        auto_approve: bool,
    },
    /// Update the state to match the real objects, changing none of them:
    /// `cairn apply -refresh-only -auto-approve`, as Terraform's
    /// `refresh` is.
    Refresh {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Mark a resource instance for replacement by the next apply (as
    /// Terraform's `taint`; `-replace=ADDR` shows it in a plan first).
    Taint(TaintArgs),
    /// Take back `cairn taint` (or a failed create's mark): the next plan
    /// does not replace the instance for it.
    Untaint(TaintArgs),
    /// Print cairn's version, the platform, and the providers cairn.lock
    /// pins here.
    Version {
        /// As JSON, with the keys of `terraform version -json`.
        #[arg(long)]
        json: bool,
    },
    /// Adopt an existing object into the state at ADDR, which the
    /// configuration must declare: `cairn import local_file.a out/a.txt`.
    Import {
        /// The resource instance address to import to.
        #[arg(value_name = "ADDR")]
        addr: String,
        /// The object's id, as its provider knows it.
        #[arg(value_name = "ID")]
        id: String,
        // After ADDR and ID: the configuration directory is the optional
        // third positional argument.
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        lock: LockFlags,
        #[command(flatten)]
        input: InputFlags,
    },
    /// Run the configuration's tests: the `*.tftest.hcl` files beside it
    /// and in its `tests/` folder, as `terraform test` does.
    Test {
        #[command(flatten)]
        common: Common,
        /// Run only this test file, a path relative to the configuration
        /// directory (repeatable).
        #[arg(long, value_name = "FILE")]
        filter: Vec<String>,
        /// Print each run's plan, or its state after an apply.
        #[arg(long)]
        verbose: bool,
        /// Also write the results to FILE as JUnit XML.
        #[arg(long = "junit-xml", value_name = "FILE")]
        junit_xml: Option<PathBuf>,
    },
    /// Show the current state, or a plan file (`cairn show FILE`).
    Show {
        #[command(flatten)]
        common: Common,
        /// Print JSON: the state file's, or for a plan file the shape of
        /// `terraform show -json`.
        #[arg(long)]
        json: bool,
    },
    /// Print the outputs of the last apply.
    Output {
        #[command(flatten)]
        flags: StateFlags,
        /// One output, in clear even when sensitive.
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print one string, number or bool as it is, without quotes or
        /// newline.
        #[arg(long)]
        raw: bool,
    },
    /// Read and change the state.
    State {
        #[command(subcommand)]
        command: StateCommand,
    },
    /// Several states for one configuration, as Terraform's workspaces.
    Workspace {
        #[command(subcommand)]
        command: WorkspaceCommand,
    },
    /// Print the dependency graph in Graphviz DOT.
    Graph {
        #[command(flatten)]
        common: Common,
        /// `plain` (dependencies) or `apply` (the steps of the current plan).
        #[arg(long = "type", default_value = "plain")]
        kind: String,
    },
    /// Release the state's lock held by another run, by its lock ID.
    ForceUnlock {
        /// The lock ID, as the error of a run refused by the lock shows it.
        lock_id: String,
        #[command(flatten)]
        common: Common,
        /// Do not ask for confirmation.
        #[arg(long)]
        force: bool,
    },
    /// Inspect providers.
    Providers {
        #[command(subcommand)]
        command: ProvidersCommand,
    },
}

#[derive(Debug, Subcommand)]
enum StateCommand {
    /// List the resource instances in the state, or those the addresses
    /// match (a resource address matches each of its instances).
    List {
        #[command(flatten)]
        flags: StateFlags,
        /// Resource or instance addresses.
        addresses: Vec<String>,
    },
    /// Show one resource instance's attributes.
    Show {
        #[command(flatten)]
        flags: StateFlags,
        #[command(flatten)]
        variables: VarFlags,
        /// The instance's address.
        address: String,
    },
    /// Forget resource instances without destroying them.
    Rm {
        #[command(flatten)]
        flags: StateFlags,
        /// Resource or instance addresses.
        #[arg(required = true)]
        addresses: Vec<String>,
    },
    /// Give objects in the state another address.
    Mv {
        #[command(flatten)]
        flags: StateFlags,
        /// A resource or instance address in the state.
        from: String,
        /// The new address, of the same type; nothing may be there.
        to: String,
    },
    /// Print the state as JSON.
    Pull {
        #[command(flatten)]
        flags: StateFlags,
        /// An earlier state the backend keeps, by serial (`state history`).
        #[arg(long, value_name = "SERIAL")]
        version: Option<u64>,
    },
    /// Replace the state with a state file.
    Push {
        #[command(flatten)]
        flags: StateFlags,
        /// Push a state whose serial is older than the current one.
        #[arg(long)]
        force: bool,
        /// The state file.
        file: PathBuf,
    },
    /// List the current state and the earlier ones the backend keeps.
    History {
        #[command(flatten)]
        flags: StateFlags,
    },
    /// Write cairn's state from Terraform's (`terraform.tfstate`), so that
    /// the objects Terraform made are planned as they are, not made again.
    Migrate {
        #[command(flatten)]
        flags: StateFlags,
        #[command(flatten)]
        variables: VarFlags,
        /// Terraform's state file.
        #[arg(default_value = crate::state::TERRAFORM_STATE_FILE)]
        from: PathBuf,
        /// Read Terraform's state from its `pg` backend instead: the
        /// backend's `conn_str`.
        #[arg(long, value_name = "CONN_STR")]
        from_pg: Option<String>,
        /// The `schema_name` of Terraform's `pg` backend.
        #[arg(long, value_name = "SCHEMA", default_value = crate::state::TERRAFORM_PG_SCHEMA)]
        pg_schema: String,
        /// The Terraform workspace whose state to read from the `pg`
        /// backend.
        #[arg(long, value_name = "NAME", default_value = "default")]
        workspace: String,
    },
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// List the workspaces, the one in use marked `*`.
    List {
        #[command(flatten)]
        flags: StateFlags,
    },
    /// Print the name of the workspace in use.
    Show {
        #[command(flatten)]
        flags: StateFlags,
    },
    /// Create a workspace, with an empty state, and switch to it.
    New {
        #[command(flatten)]
        flags: StateFlags,
        /// Letters, digits, `-` and `_`.
        name: String,
    },
    /// Switch to a workspace.
    Select {
        #[command(flatten)]
        flags: StateFlags,
        /// Create it first when it does not exist.
        #[arg(long)]
        or_create: bool,
        name: String,
    },
    /// Delete a workspace and its state.
    Delete {
        #[command(flatten)]
        flags: StateFlags,
        /// Delete it even though its state still tracks objects, which
        /// cairn then forgets without destroying them.
        #[arg(long)]
        force: bool,
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum ProvidersCommand {
    /// Print the schemas of the providers the configuration uses.
    Schema {
        #[command(flatten)]
        common: Common,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show what a provider component is and what it could ask for, without
    /// granting it anything: its resource types and the WIT imports it uses.
    Inspect {
        /// The provider's `.wasm` file, or the name of a bundled provider.
        file: PathBuf,
    },
    /// Run a provider through the contracts cairn enforces, in a throw-away
    /// sandbox: its schema; for each resource type a plan with unknown and
    /// with generated values, planning twice, apply, read, a second plan,
    /// delete, read after delete; each data source read once.
    Check {
        /// The provider's `.wasm` file, or the name of a bundled provider.
        provider: PathBuf,
        /// Grant outgoing TCP to HOST:PORT, as `sandbox { connect }` does
        /// (repeatable): a provider that manages a server checked against
        /// a test one.
        #[arg(long = "connect", value_name = "HOST:PORT")]
        connect: Vec<String>,
        /// Grant cairn's environment variable NAME, as `sandbox { env }`
        /// does (repeatable): the provider's configuration can come from it.
        #[arg(long = "env", value_name = "NAME")]
        env: Vec<String>,
    },
    /// Make a new provider project that builds and passes `providers check`
    /// as written: one resource, one test, a build script, an example.
    New {
        /// The provider's name, the prefix of its resource types.
        name: String,
        /// The language: rust, python, js, c or go.
        #[arg(long, default_value = "rust")]
        lang: String,
        /// Where to make it (default: ./NAME); it must not exist or be empty.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Make a provider component of a core WebAssembly module built for
    /// WASI preview 1 (Go, C): embed the WIT world it was built against and
    /// adapt its WASI imports, as `wasm-tools component embed` and
    /// `component new --adapt` do.
    Componentize {
        /// The core module the compiler wrote.
        module: PathBuf,
        /// Where to write the component.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        /// A WIT file or directory with the world the module was built
        /// against (default: cairn's own provider WIT). Not needed when the
        /// module already carries its world, as wit-bindgen's C glue does.
        #[arg(long)]
        wit: Option<PathBuf>,
        /// The world's name in that WIT (default: its only world, or
        /// provider-world for cairn's own WIT).
        #[arg(long)]
        world: Option<String>,
    },
    /// Make a minisign key pair for signing providers: PREFIX.key, PREFIX.pub.
    Keygen {
        /// Where to write the keys, without extension.
        prefix: PathBuf,
    },
    /// Sign a provider: writes FILE.minisig.
    Sign {
        /// The secret key (from `cairn providers keygen`).
        #[arg(long)]
        key: PathBuf,
        /// The provider's `.wasm` file.
        file: PathBuf,
    },
    /// Check a provider's signature (FILE.minisig) against public keys.
    Verify {
        /// A public key (`RW…`) or a `.pub` file; repeatable.
        #[arg(long = "key", value_name = "KEY")]
        keys: Vec<String>,
        /// The provider's `.wasm` file.
        file: PathBuf,
    },
    /// Publish a provider to an OCI registry (with FILE.minisig, if signed).
    Push {
        /// The provider's `.wasm` file.
        file: PathBuf,
        /// Where: oci://HOST/REPOSITORY:TAG.
        target: String,
    },
    /// The compiled-code cache (CAIRN_CACHE_DIR).
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
}

#[derive(Debug, Subcommand)]
enum CacheCommand {
    /// Remove every compiled provider; the next run compiles them again.
    Clean,
    /// Compile every provider the configuration uses into the cache now,
    /// so that the first plan starts them at once (for CI images).
    Warm {
        #[command(flatten)]
        common: Common,
    },
    /// The background half of a tiered first run (see `runtime::tiers`):
    /// reads the cache key and a provider's `.wasm` from standard input and
    /// stores its optimised code in DIR.
    #[command(hide = true)]
    CompileBackground {
        /// The provider's name, for messages.
        #[arg(long)]
        name: String,
        /// The cache's components directory.
        #[arg(long)]
        dir: PathBuf,
    },
}

/// Flags every command takes.
#[derive(Debug, Args)]
struct Common {
    /// The configuration directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Change to this directory first (Terraform's -chdir).
    #[arg(long)]
    chdir: Option<PathBuf>,
    #[command(flatten)]
    variables: VarFlags,
    /// Disable colours.
    #[arg(long)]
    no_color: bool,
}

/// Values for input variables.
#[derive(Debug, Args)]
struct VarFlags {
    /// Set a variable: -var 'name=value' (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Set variables from a .tfvars file (repeatable; with -var, a later
    /// one wins).
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<PathBuf>,
    /// Both of the above, in the order given: clap keeps each flag's
    /// values apart, so [`VarFlags::order`] restores the order from the
    /// parsed command line.
    #[arg(skip)]
    inputs: Vec<VariableInput>,
}

/// Where the state is, for commands that work on the state alone.
#[derive(Debug, Args)]
struct StateFlags {
    /// The configuration directory whose state to use (Terraform's -chdir;
    /// default: the current directory).
    #[arg(long)]
    chdir: Option<PathBuf>,
    /// How long a command that changes the state waits for its lock while
    /// another run holds it (e.g. 30s, 5m); 0s fails at once.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    lock_timeout: Duration,
    /// `-lock=false`: change the state without its lock, as Terraform's
    /// state commands allow (see the plan's `-lock`: only for a state no
    /// one else can be using).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    lock: bool,
}

impl StateFlags {
    /// The locking these flags ask for.
    fn locking(&self) -> crate::state::Locking {
        crate::state::Locking { enabled: self.lock, timeout: self.lock_timeout }
    }
}

/// What `cairn taint` and `cairn untaint` take.
#[derive(Debug, Args)]
struct TaintArgs {
    /// The resource instance, exactly: `null_resource.a[1]`.
    #[arg(value_name = "ADDR")]
    addr: String,
    /// An instance the state does not have is a warning, not an error.
    #[arg(long)]
    allow_missing: bool,
    #[command(flatten)]
    flags: StateFlags,
    /// Accepted as Terraform's is: nothing these commands print has
    /// colours.
    #[arg(long)]
    no_color: bool,
}

/// Flags of commands that plan.
#[derive(Debug, Args)]
struct RunFlags {
    /// Most operations running at once.
    #[arg(long, default_value_t = 10)]
    parallelism: usize,
    /// Do not ask providers whether objects changed outside cairn.
    #[arg(long = "refresh", default_value_t = true, action = clap::ArgAction::Set)]
    refresh: bool,
    /// Only make the state match the real objects: change no object
    /// (plan and apply).
    #[arg(long)]
    refresh_only: bool,
    /// Replace this resource instance even if it has no changes
    /// (repeatable): -replace=local_file.a
    #[arg(long = "replace", value_name = "ADDR")]
    replace: Vec<String>,
    /// Plan only this resource or instance and what it depends on
    /// (repeatable): -target=local_file.a
    #[arg(long = "target", value_name = "ADDR")]
    targets: Vec<String>,
    /// Write the run as a stream of JSON objects, one a line, instead of
    /// the human output (apply and destroy then need -auto-approve).
    #[arg(long)]
    json: bool,
    /// Show warnings as one summary line each, at the end of the run (in
    /// full when there are errors too), as Terraform's flag does.
    #[arg(long)]
    compact_warnings: bool,
    #[command(flatten)]
    lock: LockFlags,
    #[command(flatten)]
    input: InputFlags,
}

/// How a command that may change the state takes its lock.
#[derive(Debug, Args)]
struct LockFlags {
    /// `-lock=false`: do not take the state's lock. Nothing then keeps
    /// another run from changing the state at the same time, and one of
    /// the two may lose what it did (the PostgreSQL backend refuses the
    /// later write; the local file keeps the last one written): only for a
    /// state no one else can be using.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    lock: bool,
    /// How long to wait for the state's lock while another run holds it
    /// (e.g. 30s, 5m; Terraform's syntax); 0s fails at once.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    lock_timeout: Duration,
}

impl LockFlags {
    /// The engine's locking for these flags.
    fn locking(&self) -> crate::state::Locking {
        crate::state::Locking { enabled: self.lock, timeout: self.lock_timeout }
    }
}

/// Whether a command may ask the user for input.
#[derive(Debug, Args)]
struct InputFlags {
    /// Ask on the terminal for the value of a required variable nothing
    /// gives (`-input=false`: never ask, fail naming it, as in CI; so
    /// does a run whose standard input is not a terminal, or with
    /// `TF_INPUT=0`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    input: bool,
}

impl RunFlags {
    /// The engine's options for a run with these flags.
    fn options(&self, destroy: bool, intent: crate::engine::Intent) -> Result<RunOptions> {
        Ok(RunOptions {
            parallelism: self.parallelism,
            refresh: self.refresh,
            destroy,
            refresh_only: self.refresh_only,
            replace: addresses("-replace", &self.replace)?,
            targets: addresses("-target", self.targets.iter().filter(|t| module_target(t).is_none()))?,
            target_modules: self.targets.iter().filter_map(|t| module_target(t)).collect(),
            intent,
            locking: self.lock.locking(),
        })
    }

    /// Where this run's events go.
    fn sink(&self) -> Arc<dyn EventSink> {
        if self.json {
            Arc::new(JsonLines::new(std::io::stdout()))
        } else if std::io::stdout().is_terminal() && std::env::var_os("TERM").is_some_and(|t| t != "dumb") {
            let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100);
            Arc::new(Live::new(width))
        } else {
            Arc::new(Human)
        }
    }
}

/// The resource instance addresses given to a flag.
fn addresses<'a>(flag: &str, given: impl IntoIterator<Item = &'a String>) -> Result<Vec<crate::addr::InstanceAddr>> {
    given.into_iter().map(|a| a.parse().map_err(|e| anyhow::anyhow!("invalid {flag} address: {e}"))).collect()
}

/// A `-target` that names a module instance (`module.a`, `module.a["x"]`)
/// rather than a resource.
fn module_target(given: &str) -> Option<crate::addr::ModuleInstance> {
    given.parse::<crate::addr::ModuleInstance>().ok().filter(|m| !m.is_root())
}

impl Common {
    /// The configuration directory, after `-chdir`.
    fn dir(&self) -> PathBuf {
        self.resolve(&self.dir)
    }

    /// A path given on the command line, after `-chdir`.
    fn resolve(&self, path: &std::path::Path) -> PathBuf {
        match &self.chdir {
            Some(d) => d.join(path),
            None => path.to_path_buf(),
        }
    }

    /// A plan file given where the configuration directory goes (`cairn
    /// apply FILE`, `cairn show FILE`): the argument, when it is a file.
    fn plan_file(&self) -> Option<PathBuf> {
        Some(self.dir()).filter(|p| p.is_file())
    }

    /// The configuration directory of a run given a plan file: `-chdir`,
    /// or the current directory.
    fn config_dir(&self) -> PathBuf {
        self.chdir.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    /// Loads the configuration.
    fn workspace(&self) -> Result<Workspace> {
        Workspace::load(&self.dir(), &self.variables.inputs(self.chdir.as_deref()))
    }

    /// Loads the configuration, asking on the terminal for required
    /// variables nothing gives when `input` allows it.
    fn workspace_asking(&self, input: &InputFlags) -> Result<Workspace> {
        let inputs = self.variables.inputs(self.chdir.as_deref());
        if !input::can_ask(input.input) {
            return Workspace::load(&self.dir(), &inputs);
        }
        Workspace::load_asking(&self.dir(), &inputs, &mut input::ask_on_terminal)
    }

    /// Colours, unless disabled or not on a terminal.
    fn colors(&self) -> Colors {
        Colors::new(!self.no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal())
    }
}

impl VarFlags {
    /// Whether any -var or -var-file was given.
    fn is_empty(&self) -> bool {
        self.vars.is_empty() && self.var_files.is_empty()
    }

    /// Puts -var and -var-file values in the order they were given on the
    /// command line `matches` holds.
    fn order(&mut self, matches: &ArgMatches) {
        let mut given: Vec<(usize, VariableInput)> = Vec::new();
        if let (Some(at), Some(values)) = (matches.indices_of("vars"), matches.get_many::<String>("vars")) {
            given.extend(at.zip(values.map(|v| VariableInput::Var(v.clone()))));
        }
        if let (Some(at), Some(values)) = (matches.indices_of("var_files"), matches.get_many::<PathBuf>("var_files")) {
            given.extend(at.zip(values.map(|f| VariableInput::File(f.clone()))));
        }
        given.sort_by_key(|(at, _)| *at);
        self.inputs = given.into_iter().map(|(_, input)| input).collect();
    }

    /// The values in order, with -var-file paths after `-chdir`.
    fn inputs(&self, chdir: Option<&std::path::Path>) -> Vec<VariableInput> {
        self.inputs
            .iter()
            .map(|input| match (input, chdir) {
                (VariableInput::File(f), Some(dir)) => VariableInput::File(dir.join(f)),
                (other, _) => other.clone(),
            })
            .collect()
    }
}

impl StateFlags {
    /// The configuration directory.
    fn dir(&self) -> PathBuf {
        self.chdir.clone().unwrap_or_else(|| PathBuf::from("."))
    }
}

impl Command {
    /// The variable flags of the command, if it takes any. Every command
    /// is listed: one that takes them but is missing here would get none.
    fn variables_mut(&mut self) -> Option<&mut VarFlags> {
        match self {
            Command::Init { common, .. }
            | Command::Validate { common, .. }
            | Command::Console { common, .. }
            | Command::Plan { common, .. }
            | Command::Apply { common, .. }
            | Command::Destroy { common, .. }
            | Command::Refresh { common, .. }
            | Command::Show { common, .. }
            | Command::Test { common, .. }
            | Command::Graph { common, .. }
            | Command::Import { common, .. }
            | Command::ForceUnlock { common, .. }
            | Command::Providers {
                command:
                    ProvidersCommand::Schema { common, .. }
                    | ProvidersCommand::Cache { command: CacheCommand::Warm { common } },
            } => Some(&mut common.variables),
            Command::State {
                command: StateCommand::Show { variables, .. } | StateCommand::Migrate { variables, .. },
            } => Some(variables),
            Command::State {
                command:
                    StateCommand::List { .. }
                    | StateCommand::Rm { .. }
                    | StateCommand::Mv { .. }
                    | StateCommand::Pull { .. }
                    | StateCommand::Push { .. }
                    | StateCommand::History { .. },
            }
            | Command::Output { .. }
            | Command::Taint(_)
            | Command::Untaint(_)
            | Command::Version { .. }
            | Command::Workspace { .. }
            | Command::Fmt { .. }
            | Command::Providers {
                command:
                    ProvidersCommand::Inspect { .. }
                    | ProvidersCommand::Check { .. }
                    | ProvidersCommand::New { .. }
                    | ProvidersCommand::Componentize { .. }
                    | ProvidersCommand::Keygen { .. }
                    | ProvidersCommand::Sign { .. }
                    | ProvidersCommand::Verify { .. }
                    | ProvidersCommand::Push { .. }
                    | ProvidersCommand::Cache { .. },
            } => None,
        }
    }
}

/// The command line, parsed; -var and -var-file kept in their order.
fn parse(args: Vec<String>) -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    let mut leaf = &matches;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    if let Some(variables) = cli.command.variables_mut() {
        variables.order(leaf);
    }
    Ok(cli)
}

/// Runs a planning command; with -json, its errors become `diagnostic`
/// events and a failed `summary` instead of text on standard error.
fn json_run(command: &str, run: &RunFlags, body: impl FnOnce(&Arc<dyn EventSink>) -> Result<i32>) -> Result<i32> {
    let events = run.sink();
    if run.compact_warnings && !run.json {
        let compact = Arc::new(CompactWarnings::new(events));
        let events: Arc<dyn EventSink> = compact.clone();
        let result = body(&events);
        compact.finish(!matches!(result, Ok(0 | 2)));
        return result;
    }
    if run.json {
        events.emit(Event::RunStart {
            command: command.to_string(),
            cairn_version: env!("CARGO_PKG_VERSION").to_string(),
            parallelism: run.parallelism,
        });
    }
    let result = body(&events);
    if !run.json {
        return result;
    }
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            let diags = Diagnostics::of_error(e);
            for d in &diags {
                events.diagnostic(d);
            }
            events.emit(Event::Summary {
                command: command.to_string(),
                outcome: "failed".to_string(),
                added: 0,
                changed: 0,
                destroyed: 0,
                imported: 0,
                forgotten: 0,
                errors: diags.iter().filter(|d| d.is_error()).count(),
            });
            Ok(1)
        }
    }
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let args = normalize_flags(std::env::args());
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    if let Some(dir) = &cli.chdir
        && let Err(e) = std::env::set_current_dir(dir)
    {
        eprintln!("Error handling -chdir option: chdir {}: {e}", dir.display());
        return 1;
    }
    init_logging();
    if let Err(e) = crate::parallel::check_threads_var() {
        eprintln!("Error: {e}");
        return 1;
    }
    // A tiered first run compiles optimised code in a process of this
    // executable that outlives the run (see `runtime::tiers`).
    if let Ok(exe) = std::env::current_exe() {
        crate::runtime::compile_in_background_with(exe);
    }
    exit_quietly_on_a_closed_stdout();
    // The process exits when the command ends (see `crate::release`).
    crate::release::exit_reclaims();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            match e.downcast_ref::<Diagnostics>() {
                Some(d) => eprintln!("{}", render_all(d)),
                None => eprintln!("Error: {}", crate::diag::source::scrub(&format!("{e:#}"))),
            }
            1
        }
    }
}

/// Diagnostics for people, each with its source line and a caret.
fn render_all(diags: &Diagnostics) -> String {
    diags.0.iter().map(crate::diag::source::render).collect::<Vec<_>>().join("\n\n")
}

/// Terraform's flags are single-dash (`-auto-approve`); accept them as
/// well as the double-dash form clap expects.
fn normalize_flags(args: impl Iterator<Item = String>) -> Vec<String> {
    args.enumerate()
        .map(|(i, a)| {
            let is_single_dash_long = i > 0 && a.starts_with('-') && !a.starts_with("--") && a.len() > 2;
            if is_single_dash_long { format!("-{a}") } else { a }
        })
        .collect()
}

/// A duration as Terraform writes it (Go's syntax): numbers, each with a
/// unit (`h`, `m`, `s`, `ms`, `us`, `ns`), one after the other: `30s`,
/// `5m`, `1m30s`, `1.5s`; a bare `0` is zero.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid = || format!("{text:?} is not a duration such as 30s, 5m or 1m30s");
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().map_err(|_| invalid())?;
        rest = &rest[number_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(invalid()),
        };
        rest = &rest[unit_len..];
        total += number * seconds;
    }
    Duration::try_from_secs_f64(total).map_err(|_| invalid())
}

/// The exit status of a process ended by SIGPIPE, as a shell reports it.
const BROKEN_PIPE_STATUS: i32 = 128 + 13;

/// `cairn … | head` closes standard output early, and Rust's `print!`
/// then panics with "failed printing to stdout: Broken pipe". Exit at once
/// instead, as a command-line tool killed by SIGPIPE does (and Terraform
/// does): what was printed is all the reader wanted. An apply cut off this
/// way ends as a crash would, which its journal recovers from.
fn exit_quietly_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(BROKEN_PIPE_STATUS);
        }
        default(info)
    }));
}

fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Init { common, upgrade, lockfile, migrate_state, reconfigure, lock_timeout, _input } => {
            let backend = init::BackendFlags { migrate_state, reconfigure, lock_timeout };
            init::run(&common, upgrade, lockfile.as_deref(), &backend)
        }
        Command::Validate { common, json } => validate::run(&common, json),
        Command::Console { common, plan } => console::run(&common, plan),
        Command::Fmt { target, check, diff, recursive, list, write } => {
            fmt::run(target.as_deref(), &fmt::FmtFlags { check, diff, recursive, list, write })
        }
        Command::Plan { common, run, detailed_exitcode, destroy, out } => {
            plan::run(&common, &run, detailed_exitcode, destroy, out.as_deref())
        }
        Command::Apply { common, run, auto_approve, destroy } => apply::run(&common, &run, auto_approve, destroy),
        Command::Destroy { common, run, auto_approve } => apply::run(&common, &run, auto_approve, true),
        Command::Refresh { common, mut run } => {
            run.refresh_only = true;
            apply::run(&common, &run, true, false)
        }
        Command::Taint(a) => taint::run(&a.flags, &a.addr, taint::Mark::Taint, a.allow_missing),
        Command::Untaint(a) => taint::run(&a.flags, &a.addr, taint::Mark::Untaint, a.allow_missing),
        Command::Version { json } => version::run(std::path::Path::new("."), json),
        Command::Import { common, addr, id, lock, input } => import::run(&common, &addr, &id, &lock, &input),
        Command::Show { common, json } => show::run(&common, json),
        Command::Test { common, filter, verbose, junit_xml } => test::run(&test::TestOptions {
            dir: common.dir(),
            inputs: common.variables.inputs(common.chdir.as_deref()),
            filter: &filter,
            verbose,
            junit_xml: junit_xml.map(|p| common.resolve(&p)),
            colors: common.colors(),
        }),
        Command::Output { flags, name, json, raw } => outputs::run(&flags, name.as_deref(), json, raw),
        Command::State { command } => state::run(&command),
        Command::Workspace { command } => workspace::run(&command),
        Command::Graph { common, kind } => graph::run(&common, &kind),
        Command::ForceUnlock { lock_id, common, force } => force_unlock::run(&common, &lock_id, force),
        Command::Providers { command: ProvidersCommand::Schema { common, json } } => providers::schema(&common, json),
        Command::Providers { command: ProvidersCommand::Inspect { file } } => providers::inspect(&file),
        Command::Providers { command: ProvidersCommand::Check { provider, connect, env } } => {
            check::run(&provider, &crate::engine::check::CheckGrants { connect, env })
        }
        Command::Providers { command: ProvidersCommand::New { name, lang, dir } } => {
            new::run(&name, &lang, dir.as_deref())
        }
        Command::Providers { command: ProvidersCommand::Componentize { module, output, wit, world } } => {
            providers::componentize(&module, &output, wit.as_deref(), world.as_deref())
        }
        Command::Providers { command: ProvidersCommand::Keygen { prefix } } => providers::keygen(&prefix),
        Command::Providers { command: ProvidersCommand::Sign { key, file } } => providers::sign(&key, &file),
        Command::Providers { command: ProvidersCommand::Verify { keys, file } } => providers::verify(&keys, &file),
        Command::Providers { command: ProvidersCommand::Push { file, target } } => providers::push(&file, &target),
        Command::Providers {
            command: ProvidersCommand::Cache { command: CacheCommand::CompileBackground { name, dir } },
        } => providers::cache_compile_background(&name, &dir),
        Command::Providers { command: ProvidersCommand::Cache { command: CacheCommand::Clean } } => {
            providers::cache_clean()
        }
        Command::Providers { command: ProvidersCommand::Cache { command: CacheCommand::Warm { common } } } => {
            providers::cache_warm(&common)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dash_flags_become_double_dash() {
        let args = ["cairn", "apply", "-auto-approve", "-parallelism=3", "-var", "a=b", "dir"].map(String::from);
        assert_eq!(
            normalize_flags(args.into_iter()),
            ["cairn", "apply", "--auto-approve", "--parallelism=3", "--var", "a=b", "dir"]
        );
    }

    #[test]
    fn var_and_var_file_keep_their_order() {
        let args = ["cairn", "plan", "-var-file=a.tfvars", "-var", "x=1", "-var-file", "b.tfvars", "dir"];
        let cli = parse(normalize_flags(args.map(String::from).into_iter())).unwrap();
        let Command::Plan { common, .. } = cli.command else { panic!("not a plan: {cli:?}") };
        assert_eq!(
            common.variables.inputs(None),
            [
                VariableInput::File("a.tfvars".into()),
                VariableInput::Var("x=1".into()),
                VariableInput::File("b.tfvars".into())
            ]
        );
        assert_eq!(
            common.variables.inputs(Some(std::path::Path::new("here")))[2],
            VariableInput::File("here/b.tfvars".into())
        );
    }

    #[test]
    fn terraform_flags_take_values_as_terraform_writes_them() {
        let parsed = |args: &[&str]| parse(normalize_flags(args.iter().map(|a| a.to_string()))).unwrap();
        let cli = parsed(&["cairn", "-chdir=infra", "apply", "-auto-approve=false", "-input=false", "-lock=false"]);
        assert_eq!(cli.chdir, Some(PathBuf::from("infra")));
        let Command::Apply { run, auto_approve, .. } = cli.command else { panic!("not an apply") };
        assert!(!auto_approve && !run.input.input && !run.lock.lock && !run.compact_warnings);
        let cli = parsed(&["cairn", "destroy", "-auto-approve", "-input", "-lock", "-compact-warnings"]);
        let Command::Destroy { run, auto_approve, .. } = cli.command else { panic!("not a destroy") };
        assert!(auto_approve && run.input.input && run.lock.lock && run.compact_warnings);
        let cli = parsed(&["cairn", "import", "-lock-timeout=5s", "-input=false", "a.b", "id"]);
        let Command::Import { lock, input, .. } = cli.command else { panic!("not an import") };
        assert_eq!(lock.locking(), crate::state::Locking { enabled: true, timeout: Duration::from_secs(5) });
        assert!(!input.input);
    }

    #[test]
    fn durations_are_read_as_terraform_writes_them() {
        let secs = |t: &str| parse_duration(t).map(|d| d.as_secs_f64());
        assert_eq!(secs("30s"), Ok(30.0));
        assert_eq!(secs("5m"), Ok(300.0));
        assert_eq!(secs("1h"), Ok(3600.0));
        assert_eq!(secs("1m30s"), Ok(90.0));
        assert_eq!(secs("1.5s"), Ok(1.5));
        assert_eq!(secs("250ms"), Ok(0.25));
        assert_eq!(secs("0"), Ok(0.0));
        assert_eq!(secs("0s"), Ok(0.0));
        for bad in ["", "30", "5x", "s", "-1s", "1.2.3s"] {
            assert!(parse_duration(bad).unwrap_err().contains("not a duration"), "{bad}");
        }
    }
}
