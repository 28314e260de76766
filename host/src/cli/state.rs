//! `cairn state list | show | rm | mv | pull | push | history`: read and
//! change the state directly, as Terraform's `state` commands do.
//!
//! Every command goes through the state's [`Backend`], never the file:
//! the commands that change the state take its lock first, refuse to work
//! over a state another run is changing, and write the way every write
//! does (atomically, keeping the state from before as the backup). What an
//! address matches is [`State::matching`]'s business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{StateCommand, StateFlags, VarFlags, show};
use crate::addr::{InstanceAddr, ModuleInstance};
use crate::engine::{Engine, Workspace};
use crate::schema::Schema;
use crate::state::{Backend, State, TerraformState, TfResource};

/// Runs one `cairn state` subcommand.
pub(super) fn run(command: &StateCommand) -> Result<i32> {
    match command {
        StateCommand::List { flags, addresses } => list(flags, addresses),
        StateCommand::Show { flags, variables, address } => show_one(flags, variables, address),
        StateCommand::Rm { flags, addresses } => remove(flags, addresses),
        StateCommand::Mv { flags, from, to } => move_to(flags, from, to),
        StateCommand::Pull { flags, version } => pull(flags, *version),
        StateCommand::Push { flags, file, force } => push(flags, file, *force),
        StateCommand::History { flags } => history(flags),
        StateCommand::Migrate { flags, variables, from, from_pg, pg_schema, workspace } => {
            let source = match from_pg {
                Some(conn_str) => TerraformSource::Pg { conn_str, schema: pg_schema, workspace },
                None => TerraformSource::File(from),
            };
            migrate(flags, variables, &source)
        }
    }
}

/// Parses the addresses the user gave.
fn parse_addresses(addresses: &[String]) -> Result<Vec<InstanceAddr>> {
    addresses.iter().map(|a| a.parse::<InstanceAddr>().map_err(anyhow::Error::from)).collect()
}

/// `state list [ADDR…]`: every instance, or those the addresses match.
fn list(flags: &StateFlags, addresses: &[String]) -> Result<i32> {
    let patterns = parse_addresses(addresses)?;
    let state = flags.backend()?.read()?;
    for inst in state.resources.iter() {
        if patterns.is_empty() || patterns.iter().any(|p| crate::state::names(p, &inst.addr)) {
            println!("{}", inst.addr);
        }
    }
    Ok(0)
}

/// `state show ADDR`: one instance's attributes, sensitive ones hidden
/// (the configuration is loaded for its providers' schemas, which say
/// which attributes are sensitive).
fn show_one(flags: &StateFlags, variables: &VarFlags, address: &str) -> Result<i32> {
    let pattern: InstanceAddr = address.parse()?;
    let ws = Workspace::load(&flags.dir(), &variables.inputs(flags.chdir.as_deref()))?;
    let state = ws.backend()?.read()?;
    let found: Vec<_> = state.matching(&pattern).collect();
    let inst = match found.as_slice() {
        [] => bail!("no instance found for the given address {address}: `cairn state list` shows what the state holds"),
        [one] => *one,
        several => bail!(
            "{address} matches {} instances ({}): give one of them, with its key",
            several.len(),
            several.iter().map(|i| i.addr.to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    let engine = Engine::new()?;
    let schemas = engine.schemas(&ws, &[inst.provider.clone()].into())?;
    let schema = schemas.get(&inst.provider).and_then(|s| s.resources.get(&inst.addr.resource.type_name));
    print!("{}", show::render_instance(inst, schema));
    Ok(0)
}

/// `state rm ADDR…`: forgets what the addresses match, all or nothing.
fn remove(flags: &StateFlags, addresses: &[String]) -> Result<i32> {
    let patterns = parse_addresses(addresses)?;
    let mut backend = flags.locked_backend()?;
    let mut state = backend.read()?;
    let mut removed = Vec::new();
    for (pattern, text) in patterns.iter().zip(addresses) {
        let found = state.remove_matching(pattern);
        if found.is_empty() {
            bail!(
                "invalid target address {text}: no matching objects found; `cairn state list` shows what the state holds"
            );
        }
        removed.extend(found);
    }
    backend.write(&mut state).with_context(|| format!("nothing was removed from {}", backend.describe()))?;
    for addr in &removed {
        println!("Removed {addr}");
    }
    println!("Successfully removed {} resource instance(s).", removed.len());
    Ok(0)
}

/// `state mv FROM TO`: gives existing objects another address.
fn move_to(flags: &StateFlags, from: &str, to: &str) -> Result<i32> {
    // Module calls (or instances) move with everything in them.
    let modules = match (from.parse::<ModuleInstance>(), to.parse::<ModuleInstance>()) {
        (Ok(from), Ok(to)) if !from.is_root() && !to.is_root() => Some((from, to)),
        _ => None,
    };
    let instances: Option<(InstanceAddr, InstanceAddr)> = match modules {
        Some(_) => None,
        None => Some((from.parse()?, to.parse()?)),
    };
    let mut backend = flags.locked_backend()?;
    let mut state = backend.read()?;
    let moved = match (modules, instances) {
        (Some((from, to)), _) => state.move_module(&from, &to)?,
        (_, Some((from, to))) => state.move_matching(&from, &to)?,
        (None, None) => unreachable!("one of the two is parsed"),
    };
    backend.write(&mut state).with_context(|| format!("nothing was moved in {}", backend.describe()))?;
    for (old, new) in &moved {
        println!("Move \"{old}\" to \"{new}\"");
    }
    println!("Successfully moved {} object(s).", moved.len());
    Ok(0)
}

/// `state pull [-version=SERIAL]`: the state (or an earlier one the
/// backend keeps) as JSON on standard output.
fn pull(flags: &StateFlags, version: Option<u64>) -> Result<i32> {
    let backend = flags.backend()?;
    let state = backend.read()?;
    let state = match version {
        None => state,
        Some(serial) if serial == state.serial => state,
        Some(serial) => {
            let history = backend.history()?;
            let kept = || std::iter::once(state.serial).chain(history.iter().map(|s| s.serial));
            let available = kept().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
            match history.iter().find(|s| s.serial == serial) {
                Some(found) => found.clone(),
                None => {
                    bail!("{} keeps no state with serial {serial}; it keeps serials {available}", backend.describe())
                }
            }
        }
    };
    println!("{}", serde_json::to_string_pretty(&state)?);
    Ok(0)
}

/// `state push [-force] FILE`: replaces the state with a file's. Refused
/// for a state of another lineage or an older serial, unless forced
/// (then the pushed state is written as it is, with a serial above the
/// current one).
fn push(flags: &StateFlags, file: &Path, force: bool) -> Result<i32> {
    let file = &flags.dir().join(file);
    let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut pushed = State::parse(file, &text)?;
    let mut backend = flags.locked_backend()?;
    let current = backend.read()?;
    let other_lineage = pushed.lineage != current.lineage && current.serial > 0;
    if other_lineage && !force {
        bail!(
            "cannot push {}: it has lineage {}, but the state in {} has lineage {}, so it belongs to another \
             configuration; -force pushes it anyway",
            file.display(),
            pushed.lineage,
            backend.describe(),
            current.lineage
        );
    }
    if pushed.serial < current.serial && !force {
        bail!(
            "cannot push {}: its serial {} is older than the serial {} of the state in {}; -force pushes it anyway",
            file.display(),
            pushed.serial,
            current.serial,
            backend.describe()
        );
    }
    if force {
        // The backend's own checks are the ones -force overrides.
        backend.replace(&mut pushed)?;
    } else {
        backend.write(&mut pushed)?;
    }
    Ok(0)
}

/// `state history`: the current state and the earlier ones the backend
/// keeps, newest first.
fn history(flags: &StateFlags) -> Result<i32> {
    let backend = flags.backend()?;
    let current = backend.read()?;
    println!("{:>8}  {:<36}  {:>9}  WRITTEN BY", "SERIAL", "LINEAGE", "RESOURCES");
    let line = |state: &State, note: &str| {
        let (serial, lineage, count) = (state.serial, &state.lineage, state.resources.len());
        println!("{serial:>8}  {lineage:<36}  {count:>9}  cairn {}{note}", state.cairn_version);
    };
    line(&current, "  (current)");
    for earlier in backend.history()? {
        line(&earlier, "");
    }
    Ok(0)
}

impl StateFlags {
    /// The state's backend, unlocked.
    fn backend(&self) -> Result<Box<dyn Backend>> {
        crate::engine::backend_at(&self.dir())
    }

    /// The state's backend with its lock held, for a command that writes.
    pub(super) fn locked_backend(&self) -> Result<Box<dyn Backend>> {
        let mut backend = self.backend()?;
        backend.lock_as(self.locking())?;
        Ok(backend)
    }
}

/// `state migrate [FILE]`: cairn's state written from Terraform's, through
/// the configured backend and under its lock; refused, with nothing
/// written, when the backend holds a state already or when any object
/// cannot come over (`crate::state::TerraformState::into_state`).
fn migrate(flags: &StateFlags, variables: &VarFlags, source: &TerraformSource) -> Result<i32> {
    let ws = Workspace::load(&flags.dir(), &variables.inputs(flags.chdir.as_deref()))?;
    let (place, text) = source.read(&flags.dir())?;
    let tf = TerraformState::parse(&place, &text).map_err(anyhow::Error::msg)?;
    let (version, serial, lineage) = (tf.terraform_version.clone(), tf.serial, tf.lineage.clone());
    let names: BTreeSet<String> =
        tf.resources.iter().filter(|r| r.is_managed()).map(|r| cairn_provider(&ws, r)).collect();
    let engine = Engine::new()?;
    // One provider at a time, so that one cairn does not have names itself
    // and the others still come over.
    let mut schemas = BTreeMap::new();
    for name in &names {
        let one = engine.schemas(&ws, &[name.clone()].into()).map_err(|e| format!("{e:#}"));
        schemas.insert(name.clone(), one.and_then(|mut s| s.remove(name).ok_or_else(|| "not loaded".to_string())));
    }
    let provider_of = |r: &TfResource| -> Result<(String, Schema), String> {
        let name = cairn_provider(&ws, r);
        let provider = match schemas.get(&name) {
            Some(Ok(provider)) => provider,
            Some(Err(e)) => return Err(format!("cairn has no provider \"{name}\" ({}): {e}", r.provider)),
            None => return Err(format!("cairn has no provider \"{name}\" ({})", r.provider)),
        };
        let schema = provider
            .resources
            .get(&r.type_name)
            .ok_or_else(|| format!("cairn's provider \"{name}\" has no resource type \"{}\"", r.type_name))?;
        Ok((name, schema.clone()))
    };
    let mut state = tf.into_state(&provider_of).map_err(|problems| {
        anyhow::anyhow!("cannot migrate {place}; nothing was written:\n  {}", problems.join("\n  "))
    })?;
    let mut backend = flags.locked_backend()?;
    let current = backend.read()?;
    if current.serial > 0 || !current.resources.is_empty() {
        bail!(
            "{} already holds a cairn state (serial {}, {} resource instance(s)): migrating would replace it, so \
             nothing was written",
            backend.describe(),
            current.serial,
            current.resources.len()
        );
    }
    backend.write(&mut state)?;
    println!(
        "Migrated {} resource instance(s) and {} output(s) from {place} (Terraform {version}, serial {serial}, \
         lineage {lineage}) to {}. Run `cairn plan`: it shows what the configuration would change.",
        state.resources.len(),
        state.outputs.len(),
        backend.describe()
    );
    Ok(0)
}

/// Where `state migrate` reads Terraform's state.
enum TerraformSource<'a> {
    /// A state file (`terraform.tfstate`), relative to the directory.
    File(&'a Path),
    /// A workspace's state in Terraform's `pg` backend.
    Pg { conn_str: &'a str, schema: &'a str, workspace: &'a str },
}

impl TerraformSource<'_> {
    /// Where it is, for messages, and the state's JSON text.
    fn read(&self, dir: &Path) -> Result<(String, Vec<u8>)> {
        match self {
            TerraformSource::File(file) => {
                let path = dir.join(file);
                let text = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
                Ok((path.display().to_string(), text))
            }
            TerraformSource::Pg { conn_str, schema, workspace } => {
                let text = crate::state::read_terraform_pg_state(conn_str, schema, workspace)?;
                Ok((
                    format!("Terraform's state \"{workspace}\" in {}", crate::state::pg_location(conn_str, schema)),
                    text,
                ))
            }
        }
    }
}

/// The local name of the cairn provider of a resource of Terraform's
/// state: the configuration's, for a resource it has; else the type of
/// the provider Terraform recorded (`random` for `hashicorp/random`).
fn cairn_provider(ws: &Workspace, resource: &TfResource) -> String {
    let configured = resource.address().ok().and_then(|addr| ws.config.resources.iter().find(|r| r.addr == addr));
    match configured {
        Some(r) => r.provider.clone(),
        None => resource.provider_type().to_string(),
    }
}
