//! Loading a configuration directory: every `*.tf` file, sorted by name,
//! parsed and interpreted block by block into a [`Config`], then checked for
//! duplicate names and bad references. All problems are reported together,
//! in file and line order.

use std::path::{Path, PathBuf};

use crate::addr::{AddrMap, Mode, ModuleInstance, ResourceAddr, is_identifier};
use crate::diag::{Diagnostic, Location};

use super::blocks::{
    expect_no_labels, literal_bool, literal_string, take_attribute, unsupported_argument, unsupported_block,
};
use super::source::SourceFile;
use super::{
    Block, Body, ConditionKind, Config, Local, Output, check, checks, conditions, error_at, module, parse, provider,
    refactor, resource, suggest, variables,
};

const TOP_LEVEL_BLOCKS: &[&str] = &[
    "resource",
    "data",
    "provider",
    "variable",
    "locals",
    "output",
    "moved",
    "import",
    "removed",
    "terraform",
    "cairn",
    "module",
    "check",
];
const OUTPUT_ARGUMENTS: &[&str] = &["value", "sensitive", "ephemeral", "description", "depends_on"];

/// Reads and parses every `*.tf` file in `dir`. Returns the configuration,
/// or every error found (each with `file:line`, the file relative to `dir`).
pub fn load(dir: &Path) -> Result<Config, Vec<Diagnostic>> {
    let dir = dir.canonicalize().map_err(|e| unreadable_dir(dir, &e))?;
    crate::diag::source::remember_dir(&dir);
    let mut config = load_module(&dir, Path::new(""), 0)?;
    module::gather_requirements(&mut config);
    // In the root module an aliased configuration must be declared; inside
    // a module it is passed in, which expansion checks.
    let undeclared: Vec<Diagnostic> = config
        .resources
        .iter()
        .filter(|r| r.provider.contains('.') && config.provider(&r.provider).is_none())
        .map(|r| {
            error_at(
                "Reference to undeclared provider configuration",
                format!(
                    "{} uses the provider configuration {:?}, which is not declared: add provider \"{}\" {{ alias = \"{}\" }}.",
                    r.addr,
                    r.provider,
                    r.provider.split('.').next().unwrap_or_default(),
                    r.provider.split('.').nth(1).unwrap_or_default()
                ),
                &r.location,
            )
        })
        .collect();
    if undeclared.is_empty() { Ok(config) } else { Err(undeclared) }
}

/// Loads the module in `module_dir` (relative to the root module's
/// directory `root`; empty for the root module itself), `depth` calls
/// below the root. Its files are named relative to `root` in diagnostics,
/// and its relative paths are relative to `root` too (`path.module` says
/// where the module is).
pub(super) fn load_module(root: &Path, module_dir: &Path, depth: usize) -> Result<Config, Vec<Diagnostic>> {
    let dir = root.join(module_dir);
    let names = config_file_names(&dir)?;
    let mut loader = Loader {
        config: Config { dir: root.to_path_buf(), ..Config::default() },
        module_dir: module_dir.to_path_buf(),
        depth,
        declared: AddrMap::default(),
        diags: Vec::new(),
    };
    // A file that cannot be parsed declares nothing, so references to what
    // it declares would all look undeclared: those checks wait for a clean parse.
    let mut all_parsed = true;
    for name in names {
        match std::fs::read_to_string(dir.join(&name)) {
            Ok(text) => {
                let file = SourceFile::new(module_dir.join(&name), text);
                match parse::parse_file(&file, &mut loader.diags) {
                    Some(body) => loader.file(body),
                    None => all_parsed = false,
                }
            }
            Err(e) => loader.diags.push(error_at(
                "Cannot read configuration file",
                e.to_string(),
                &Location::new(module_dir.join(name), 1, 1),
            )),
        }
    }
    let Loader { config, mut diags, .. } = loader;
    if all_parsed {
        check::check_references(&config, &mut diags);
        // With modules, what a refactoring block names is known only
        // once they are expanded ([`module::expand_modules`] checks then).
        if config.modules.is_empty() {
            refactor::check(&config, &mut diags);
        }
    }
    if diags.iter().any(Diagnostic::is_error) {
        diags.sort_by(|a, b| a.location.cmp(&b.location));
        return Err(diags);
    }
    Ok(config)
}

/// The `*.tf` files of the configuration directory `dir`, sorted by name:
/// every file a configuration is loaded from, besides variable files.
pub fn config_files(dir: &Path) -> Result<Vec<PathBuf>, Vec<Diagnostic>> {
    Ok(config_file_names(dir)?.into_iter().map(|name| dir.join(name)).collect())
}

/// The names of the `*.tf` files in `dir`, sorted.
fn config_file_names(dir: &Path) -> Result<Vec<PathBuf>, Vec<Diagnostic>> {
    let unreadable = |e: std::io::Error| unreadable_dir(dir, &e);
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let name = PathBuf::from(entry.file_name());
        if name.extension().is_some_and(|e| e == "tf") && entry.path().is_file() {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Err(vec![
            Diagnostic::error("No configuration files")
                .with_detail(format!("The directory {} contains no .tf files.", dir.display())),
        ]);
    }
    names.sort();
    Ok(names)
}

fn unreadable_dir(dir: &Path, e: &std::io::Error) -> Vec<Diagnostic> {
    vec![Diagnostic::error("Cannot read the configuration directory").with_detail(format!("{}: {e}", dir.display()))]
}

/// The configuration as it is built, file by file.
struct Loader {
    config: Config,
    /// The module's directory relative to the root module's (empty for the root).
    module_dir: PathBuf,
    /// How many module calls lead here from the root module.
    depth: usize,
    /// Where each declared name ("resource random_id.x", "variable a", …) was first declared.
    /// By hash: the names of a large configuration share long prefixes,
    /// which an ordered map compares again at every step.
    declared: AddrMap<String, Location>,
    diags: Vec<Diagnostic>,
}

impl Loader {
    fn file(&mut self, body: Body) {
        for attr in &body.attributes {
            self.diags.push(error_at(
                "Unsupported argument",
                format!(
                    "An argument named \"{}\" is not expected at the top level of a file, where only blocks \
                     (resource, data, provider, variable, locals, output, moved, import, removed, terraform) belong.",
                    attr.name
                ),
                &attr.location,
            ));
        }
        for block in body.blocks {
            self.block(block);
        }
    }

    fn block(&mut self, block: Block) {
        let dir = self.config.dir.clone();
        if !self.module_dir.as_os_str().is_empty() && self.root_only(&block) {
            return;
        }
        match block.type_name.as_str() {
            "resource" => self.resource(block, Mode::Managed),
            "data" => self.resource(block, Mode::Data),
            "ephemeral" => self.resource(block, Mode::Ephemeral),
            "provider" => {
                let Some(name) = self.name_label(&block, "provider") else {
                    return;
                };
                let alias = match block.body.attribute("alias").map(|a| &a.expr.kind) {
                    Some(super::ExprKind::Literal(crate::value::Value::String(alias))) => format!(" alias {alias:?}"),
                    _ => String::new(),
                };
                if self.declare("provider configuration", &format!("provider \"{name}\"{alias}"), &block.location) {
                    let p = provider::provider(name, block, &dir, &mut self.diags);
                    self.config.providers.push(p);
                }
            }
            "variable" => {
                let Some(name) = self.name_label(&block, "variable") else {
                    return;
                };
                if self.declare("variable", &format!("variable \"{name}\""), &block.location) {
                    let v = variables::variable(name.clone(), block, &dir, &mut self.diags);
                    self.config.variables.insert(name, v);
                }
            }
            "locals" => self.locals(block),
            "check" => self.check(block),
            "output" => self.output(block),
            "moved" => self.config.moved.extend(refactor::moved(block, &mut self.diags)),
            "import" => self.config.imports.extend(refactor::import(block, &mut self.diags)),
            "removed" => self.config.removed.extend(refactor::removed(block, &dir, &mut self.diags)),
            "terraform" | "cairn" => {
                provider::settings(&block, &dir, &mut self.config, &mut self.diags);
            }
            "module" => {
                // The labels are checked by `call`.
                let name = block.labels.first().cloned().unwrap_or_default();
                if self.declare("module call", &format!("module \"{name}\""), &block.location)
                    && let Some(call) = module::call(block, &dir, &self.module_dir, self.depth, &mut self.diags)
                {
                    self.config.modules.push(call);
                }
            }
            other => self.diags.push(error_at(
                "Unsupported block type",
                format!(
                    "Blocks of type \"{other}\" are not expected at the top level.{}",
                    suggest::did_you_mean(other, TOP_LEVEL_BLOCKS.iter().copied())
                ),
                &block.location,
            )),
        }
    }

    /// An error for a block that belongs only in the root module, when
    /// `block` is one (this being a called module): provider
    /// configurations are passed in by `providers`, refactoring blocks name
    /// module addresses from the root, and the state has one backend.
    fn root_only(&mut self, block: &Block) -> bool {
        let why = match block.type_name.as_str() {
            "provider" => {
                "Provider configurations belong in the root module: declare the provider there (with an alias if \
                 this module needs its own configuration) and pass it with providers = { … } on the module block."
            }
            "moved" | "import" | "removed" => {
                "Refactoring blocks belong in the root module, where they name module addresses like \
                 module.NAME.TYPE.NAME."
            }
            "terraform" | "cairn" if block.body.blocks.iter().any(|b| b.type_name == "backend") => {
                "Only the root module chooses where the state is kept: remove the backend block from this module."
            }
            _ => return false,
        };
        self.diags.push(error_at(format!("{} block not allowed in a module", block.type_name), why, &block.location));
        true
    }

    fn resource(&mut self, block: Block, mode: Mode) {
        let kind = match mode {
            Mode::Data => "data",
            Mode::Ephemeral => "ephemeral",
            Mode::Managed => "resource",
        };
        let [type_name, name] = block.labels.as_slice() else {
            self.diags.push(error_at(
                format!("Wrong number of labels for a {kind} block"),
                format!("A {kind} block takes two labels, the type and the name: {kind} \"TYPE\" \"NAME\" {{ … }}."),
                &block.location,
            ));
            return;
        };
        if !self.valid_name(type_name, &block.location) || !self.valid_name(name, &block.location) {
            return;
        }
        let addr = ResourceAddr::new(ModuleInstance::root(), mode, type_name, name);
        let what = match mode {
            Mode::Data => "data resource",
            Mode::Ephemeral => "ephemeral resource",
            Mode::Managed => "resource",
        };
        if self.declare(what, &addr.to_string(), &block.location) {
            let r = resource::resource(addr, block, &self.config.dir, &mut self.diags);
            self.config.resources.push(r);
        }
    }

    /// A `check` block; its data sources are declared with the others,
    /// whose names they share.
    fn check(&mut self, block: Block) {
        let Some(name) = self.name_label(&block, "check") else {
            return;
        };
        if !self.declare("check block", &format!("check \"{name}\""), &block.location) {
            return;
        }
        let check = checks::check(name, block, &self.config.dir, &mut self.diags);
        for data in &check.data {
            self.declare("data resource", &data.addr.to_string(), &data.location);
        }
        self.config.checks.push(check);
    }

    fn locals(&mut self, block: Block) {
        expect_no_labels(&block, &mut self.diags);
        for nested in &block.body.blocks {
            self.diags.push(unsupported_block(nested, "locals", &[]));
        }
        for attr in block.body.attributes {
            if self.declare("local value", &format!("local.{}", attr.name), &attr.location) {
                let local = Local {
                    name: attr.name.clone(),
                    expr: attr.expr,
                    location: attr.location,
                    input: None,
                    depends_on: Vec::new(),
                    preconditions: Vec::new(),
                    output_ephemeral: None,
                };
                self.config.locals.insert(attr.name, local);
            }
        }
    }

    fn output(&mut self, block: Block) {
        let Some(name) = self.name_label(&block, "output") else {
            return;
        };
        if !self.declare("output", &format!("output \"{name}\""), &block.location) {
            return;
        }
        let dir = &self.config.dir;
        let diags = &mut self.diags;
        let Block { mut body, location, .. } = block;
        let Some(value) = take_attribute(&mut body, "value") else {
            diags.push(error_at(
                "Missing required argument",
                format!("The output \"{name}\" needs a value: value = …"),
                &location,
            ));
            return;
        };
        let depends_on =
            take_attribute(&mut body, "depends_on").map(|a| resource::depends_on(&a, diags)).unwrap_or_default();
        let mut output = Output {
            name: name.clone(),
            expr: value.expr,
            sensitive: false,
            ephemeral: false,
            description: String::new(),
            depends_on,
            preconditions: Vec::new(),
            location,
        };
        for attr in &body.attributes {
            match attr.name.as_str() {
                "sensitive" => output.sensitive = literal_bool(attr, dir, diags),
                "ephemeral" => output.ephemeral = literal_bool(attr, dir, diags),
                "description" => output.description = literal_string(attr, dir, diags).unwrap_or_default(),
                _ => diags.push(unsupported_argument(attr, "output", OUTPUT_ARGUMENTS)),
            }
        }
        for nested in &body.blocks {
            match nested.type_name.as_str() {
                "precondition" => output.preconditions.extend(conditions::condition_block(
                    nested,
                    ConditionKind::OutputPrecondition,
                    diags,
                )),
                _ => diags.push(unsupported_block(nested, "output", &["precondition"])),
            }
        }
        self.config.outputs.insert(name, output);
    }

    /// The one label of a `provider`, `variable` or `output` block.
    fn name_label(&mut self, block: &Block, kind: &str) -> Option<String> {
        let [name] = block.labels.as_slice() else {
            self.diags.push(error_at(
                format!("Wrong number of labels for a {kind} block"),
                format!("A {kind} block takes one label, its name: {kind} \"NAME\" {{ … }}."),
                &block.location,
            ));
            return None;
        };
        self.valid_name(name, &block.location).then(|| name.clone())
    }

    fn valid_name(&mut self, name: &str, location: &Location) -> bool {
        let valid = is_identifier(name);
        if !valid {
            self.diags.push(error_at(
                "Invalid name",
                format!(
                    "{name:?} is not a valid name: a name starts with a letter or underscore and contains only \
                     letters, digits, underscores and dashes."
                ),
                location,
            ));
        }
        valid
    }

    /// Records a declaration; false (after an error naming the first one)
    /// when the name is already taken.
    fn declare(&mut self, what: &str, name: &str, location: &Location) -> bool {
        let key = format!("{what} {name}");
        if let Some(first) = self.declared.get(&key) {
            self.diags.push(error_at(
                format!("Duplicate {what}"),
                format!("{name} was already declared at {first}; names must be unique."),
                location,
            ));
            return false;
        }
        self.declared.insert(key, location.clone());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main, write_dir};
    use super::*;
    use crate::value::Value;

    #[test]
    fn loads_every_tf_file_in_name_order() {
        let dir = write_dir(&[
            ("b.tf", "resource \"random_id\" \"second\" {\n  byte_length = 4\n}\n"),
            ("a.tf", "resource \"random_id\" \"first\" {\n  byte_length = 4\n}\n"),
            ("notes.txt", "resource {"),
            ("sub/c.tf", "this is not read {"),
        ]);
        let config = load(dir.path()).unwrap();
        assert_eq!(config.dir, dir.path().canonicalize().unwrap());
        let names: Vec<String> = config.resources.iter().map(|r| format!("{} {}", r.addr, r.location)).collect();
        assert_eq!(names, ["random_id.first a.tf:1", "random_id.second b.tf:1"]);
    }

    #[test]
    fn empty_or_missing_directories_are_errors() {
        let dir = write_dir(&[("readme.md", "")]);
        let errors = load(dir.path()).unwrap_err();
        assert_eq!(errors[0].summary, "No configuration files");
        let errors = load(&dir.path().join("missing")).unwrap_err();
        assert_eq!(errors[0].summary, "Cannot read the configuration directory");
    }

    #[test]
    fn locals_and_outputs() {
        let (_dir, config) = load_main(
            "locals {\n  a = 1\n  b = local.a + 1\n}\nlocals {\n  c = \"x\"\n}\noutput \"o\" {\n  value       = local.b\n  sensitive   = true\n  description = \"the o\"\n  depends_on  = [random_id.x]\n}\nresource \"random_id\" \"x\" {}\n",
        );
        assert_eq!(config.locals.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(config.locals["b"].location.to_string(), "main.tf:3");
        let o = &config.outputs["o"];
        assert!(o.sensitive);
        assert_eq!(o.description, "the o");
        let refs: Vec<String> = o.references().iter().map(|(r, l)| format!("{r} {l}")).collect();
        assert_eq!(refs, ["local.b main.tf:9", "random_id.x main.tf:12"]);
        let ctx = super::super::EvalContext::new(".");
        assert_eq!(super::super::eval(&config.locals["a"].expr, &ctx).unwrap(), Value::int(1));
    }

    #[test]
    fn duplicates_name_the_first_declaration() {
        let dir = write_dir(&[
            (
                "a.tf",
                "resource \"random_id\" \"x\" {}\ndata \"random_id\" \"x\" {}\nvariable \"v\" {}\nlocals {\n  l = 1\n}\noutput \"o\" {\n  value = 1\n}\nprovider \"p\" {}\n",
            ),
            (
                "b.tf",
                "resource \"random_id\" \"x\" {}\nvariable \"v\" {}\nlocals {\n  l = 2\n}\noutput \"o\" {\n  value = 2\n}\nprovider \"p\" {}\n",
            ),
        ]);
        let errors: Vec<String> = load(dir.path()).unwrap_err().iter().map(Diagnostic::to_string).collect();
        assert_eq!(
            errors,
            [
                "Error: b.tf:1: Duplicate resource\n  random_id.x was already declared at a.tf:1; names must be unique.",
                "Error: b.tf:2: Duplicate variable\n  variable \"v\" was already declared at a.tf:3; names must be unique.",
                "Error: b.tf:4: Duplicate local value\n  local.l was already declared at a.tf:5; names must be unique.",
                "Error: b.tf:6: Duplicate output\n  output \"o\" was already declared at a.tf:7; names must be unique.",
                "Error: b.tf:9: Duplicate provider configuration\n  provider \"p\" was already declared at a.tf:10; names must be unique.",
            ]
        );
    }

    #[test]
    fn structural_errors() {
        let errors = load_errors(
            "x = 1\nresourse \"a\" \"b\" {}\nresource \"a\" {}\nresource \"a b\" \"c\" {}\nvariable {}\nmodule \"m\" {}\noutput \"o\" {}\noutput \"p\" {\n  value = 1\n  sensitve = true\n}\nlocals \"x\" {}\n",
        );
        let expected = [
            "Error: main.tf:1: Unsupported argument\n  An argument named \"x\" is not expected at the top level",
            "Error: main.tf:2: Unsupported block type\n  Blocks of type \"resourse\" are not expected at the top level. Did you mean \"resource\"?",
            "Error: main.tf:3: Wrong number of labels for a resource block",
            "Error: main.tf:4: Invalid name\n  \"a b\" is not a valid name",
            "Error: main.tf:5: Wrong number of labels for a variable block",
            "Error: main.tf:6: Missing required argument\n  The module \"m\" needs a source",
            "Error: main.tf:7: Missing required argument\n  The output \"o\" needs a value",
            "Error: main.tf:10: Unsupported argument\n  An argument named \"sensitve\" is not expected in an output block. Did you mean \"sensitive\"?",
            "Error: main.tf:12: Extraneous label for block",
        ];
        assert_eq!(errors.len(), expected.len(), "{}", errors.join("\n"));
        for (shown, e) in errors.iter().zip(expected) {
            assert!(shown.starts_with(e), "expected {e:?}, got {shown:?}");
        }
    }

    #[test]
    fn errors_from_several_files_are_all_reported_in_order() {
        let dir = write_dir(&[
            ("a.tf", "resource \"x\" \"y\" {\n  count = 1\n  for_each = {}\n}\n"),
            ("b.tf", "b = [\n"),
            ("c.tf", "output \"o\" {\n  value = 1\n  sensitve = true\n}\n"),
        ]);
        let errors: Vec<String> =
            load(dir.path()).unwrap_err().iter().map(|d| d.location.as_ref().unwrap().to_string()).collect();
        assert_eq!(errors, ["a.tf:3", "b.tf:1", "c.tf:3"]);
    }

    #[test]
    fn a_syntax_error_does_not_cascade_into_undeclared_references() {
        let dir = write_dir(&[
            ("a.tf", "output \"o\" {\n  value = var.v\n}\n"),
            ("b.tf", "variable \"v\" {\n  default = [\n}\n"),
        ]);
        let errors = load(dir.path()).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].summary, "Syntax error");
    }
}
