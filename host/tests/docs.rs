//! The documentation against the repository and the product: every file a
//! Markdown document names (a link, a path in backquotes, a `*.md` name)
//! is in the repository, no document (nor a module's doc comment) names a
//! file kept outside it, and the README's function list is the function
//! table, name for name.
//!
//! A reader of a clone must find every document it names, so a rename that
//! leaves a reference behind, or a reference to a file beside the checkout,
//! fails here with the document and line.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use regex::Regex;

/// What no document may name: files kept beside the repository, which a
/// clone does not have.
const OUTSIDE: &[&str] = &["../shared", "seeds/", "DESIGN.md", "TOOLCHAINS.md"];

/// Paths in backquotes that are not files of the repository, though they
/// look like ones: what a run writes, and another project's paths. Each is
/// `(document, path)`.
const NOT_REPOSITORY_FILES: &[(&str, &str)] = &[
    // Written by the quickstart's apply.
    ("README.md", "examples/quickstart/out/hello.txt"),
    ("README.md", "examples/quickstart/cairn.state.json"),
    // The directory of the wasmtime-wasi-http crate the WIT files come from.
    ("providers/testing/zoo/wit/deps/README.md", "wit/deps/"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the host crate is in the workspace").to_path_buf()
}

/// The repository's files whose names end in `suffix`, relative to the
/// root: git's tracked and not ignored ones, or, without git, every file
/// outside hidden directories and build outputs.
fn files(root: &Path, suffix: &str) -> Vec<PathBuf> {
    let git = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", &format!("*{suffix}")])
        .output();
    let mut found: Vec<PathBuf> = match git {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|p| !p.is_empty() && root.join(p).is_file())
            .map(PathBuf::from)
            .collect(),
        _ => {
            let mut all = Vec::new();
            walk(root, Path::new(""), &mut all);
            all.into_iter().filter(|p| p.to_string_lossy().ends_with(suffix)).collect()
        }
    };
    found.sort();
    found.dedup();
    found
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        let path = dir.join(&name);
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(root, &path, out);
        } else {
            out.push(path);
        }
    }
}

/// `path` joined to `base` with `.` and `..` resolved by name; `None` when
/// it leaves the repository.
fn inside(base: &Path, path: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = Vec::new();
    for component in base.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

/// The text with every fenced code block blanked, line numbers kept:
/// examples of configuration and shell are not references to files.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let lines = text.lines().map(|line| {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence {
            fenced = !fenced;
        }
        if fence || fenced { "" } else { line }
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// The anchor GitHub gives a heading: lowercase, punctuation dropped,
/// spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let heading = Regex::new(r"^#{1,6}\s+(.*?)\s*#*$").expect("a valid pattern");
    prose(text).lines().filter_map(|l| heading.captures(l)).map(|c| slug(&c[1])).collect()
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[test]
fn documents_name_only_files_in_the_repository() {
    let root = root();
    let documents = files(&root, ".md");
    assert!(documents.iter().any(|d| d == Path::new("README.md")), "no README.md among {documents:?}");
    let top: BTreeSet<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "target")
        .collect();
    let modules: BTreeSet<String> = std::fs::read_dir(root.join("host/src"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let span = Regex::new(r"`([^`\n]+)`").unwrap();
    let path_like = Regex::new(r"^[A-Za-z0-9_.\-/]+$").unwrap();
    let url = Regex::new(r"<?[a-z]+://[^\s>)]+").unwrap();
    let markdown_name = Regex::new(r"(^|[^\w./-])([\w./-]+\.md)\b").unwrap();
    let scheme = Regex::new(r"^[a-zA-Z][a-zA-Z0-9+.-]*:").unwrap();

    let mut problems = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(root.join(document)).unwrap();
        let name = document.to_string_lossy();
        let dir = document.parent().unwrap_or(Path::new(""));
        let mut problem = |at: usize, what: String| problems.push(format!("{name}:{}: {what}", line_of(&text, at)));
        let exists = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| root.join(p).exists());

        for outside in OUTSIDE {
            for (at, _) in text.match_indices(outside) {
                problem(at, format!("names {outside:?}, which is not in the repository"));
            }
        }

        let body = prose(&text);
        for c in link.captures_iter(&body) {
            let (at, target) = (c.get(1).unwrap().start(), &c[1]);
            if scheme.is_match(target) {
                continue;
            }
            let (path, anchor) = target.split_once('#').map_or((target, None), |(p, a)| (p, Some(a)));
            let file = if path.is_empty() { Some(document.clone()) } else { inside(dir, path) };
            if !exists(&file) {
                problem(at, format!("links to {target:?}, which is not in the repository"));
                continue;
            }
            let file = file.unwrap();
            if let Some(anchor) = anchor
                && file.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(root.join(&file)).unwrap()).contains(anchor)
            {
                problem(at, format!("links to {target:?}, but {} has no heading with that anchor", file.display()));
            }
        }

        for c in span.captures_iter(&body) {
            let (at, path) = (c.get(1).unwrap().start(), &c[1]);
            if !path_like.is_match(path) || path.chars().all(|c| c == '.' || c == '/') {
                continue;
            }
            if NOT_REPOSITORY_FILES.contains(&(name.as_ref(), path)) {
                continue;
            }
            let first = path.split('/').next().unwrap_or_default();
            let checked = (path.contains('/') && (top.contains(first) || first == ".."))
                || path.ends_with(".md")
                || (path.contains('/') && modules.contains(first));
            if !checked || first == "target" {
                continue;
            }
            let candidates = [inside(dir, path), inside(Path::new(""), path), inside(Path::new("host/src"), path)];
            if !candidates.iter().any(exists) {
                problem(at, format!("names `{path}`, which is not in the repository"));
            }
        }

        let without_urls = url.replace_all(&body, |c: &regex::Captures| " ".repeat(c[0].len()));
        for c in markdown_name.captures_iter(&without_urls) {
            let (at, mentioned) = (c.get(2).unwrap().start(), &c[2]);
            if NOT_REPOSITORY_FILES.contains(&(name.as_ref(), mentioned)) {
                continue;
            }
            if ![inside(dir, mentioned), inside(Path::new(""), mentioned)].iter().any(exists) {
                problem(at, format!("names {mentioned}, which is not in the repository"));
            }
        }
    }
    assert!(problems.is_empty(), "documents name files a clone does not have:\n{}", problems.join("\n"));
}

/// A module's doc comment is documentation too: it names no file kept
/// beside the repository.
#[test]
fn module_docs_name_no_file_outside_the_repository() {
    let root = root();
    let mut problems = Vec::new();
    for source in files(&root, ".rs") {
        let text = std::fs::read_to_string(root.join(&source)).unwrap();
        for (number, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with("//!") {
                continue;
            }
            for outside in OUTSIDE.iter().filter(|o| line.contains(*o)) {
                problems.push(format!("{}:{}: names {outside:?}", source.display(), number + 1));
            }
        }
    }
    assert!(problems.is_empty(), "module docs name files a clone does not have:\n{}", problems.join("\n"));
}

/// The README's "Functions" section: the names it lists as supported, and
/// those it lists as left out. A bullet is `- what: names`; a left-out
/// bullet names its functions before its first `: `.
fn readme_functions(readme: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let start = readme.find("\n### Functions\n").expect("the README has a \"### Functions\" section");
    let section = &readme[start + 1..];
    let section = &section[..section[4..].find("\n### ").map_or(section.len(), |end| end + 4)];
    let (supported, left_out) = section.split_once("\nLeft out").expect("the section has a \"Left out\" list");
    let identifier = Regex::new(r"`([a-z][a-z0-9_]*)`").expect("a valid pattern");
    let bullets = |text: &str| {
        let mut bullets: Vec<String> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("- ") {
                bullets.push(rest.to_string());
            } else if line.starts_with("  ")
                && let Some(last) = bullets.last_mut()
            {
                last.push(' ');
                last.push_str(line.trim());
            } else if !line.trim().is_empty() && !bullets.is_empty() {
                break;
            }
        }
        bullets
    };
    let names = |text: &str| identifier.captures_iter(text).map(|c| c[1].to_string()).collect::<Vec<_>>();
    let supported_names =
        bullets(supported).iter().flat_map(|b| names(b.split_once(": ").map_or("", |(_, list)| list))).collect();
    let left_out_names = bullets(left_out.split_once('\n').map_or("", |(_, rest)| rest))
        .iter()
        .flat_map(|b| names(b.split_once(": ").map_or(b.as_str(), |(head, _)| head)))
        .collect();
    (supported_names, left_out_names)
}

/// Every function the engine implements, read from its table
/// (`config/functions/`: `Function::new("name", …)`) and from the names the
/// evaluator handles itself (`all_names`).
fn implemented_functions(root: &Path) -> BTreeSet<String> {
    let dir = root.join("host/src/config/functions");
    let table = Regex::new(r#"Function::new\(\s*"([a-z0-9_]+)""#).expect("a valid pattern");
    let quoted = Regex::new(r#""([a-z0-9_]+)""#).expect("a valid pattern");
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("the functions directory").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("a readable source file");
        names.extend(table.captures_iter(&text).map(|c| c[1].to_string()));
        if let Some(start) = text.find("fn all_names(") {
            let body = &text[start..];
            let body = &body[..body.find("\n}").expect("all_names ends")];
            let chained = &body[body.find(".chain(").expect("all_names chains the evaluator's names")..];
            let before = names.len();
            names.extend(quoted.captures_iter(chained).map(|c| c[1].to_string()));
            assert!(names.len() > before, "no names found in all_names' chain: {chained}");
        }
    }
    assert!(names.len() > 100, "only {} functions found in {}: has the table moved?", names.len(), dir.display());
    names
}

/// How calling `name()` with no arguments fails: `None` when the call is
/// accepted, else the error's summary.
fn call_with_no_arguments(name: &str) -> Option<String> {
    let expression = cairn::config::parse_expression(&format!("{name}()"), "docs.rs").expect("a call parses");
    let context = cairn::config::EvalContext::new(std::env::temp_dir());
    cairn::config::eval(&expression, &context).err().map(|errors| errors[0].summary.clone())
}

const UNKNOWN_FUNCTION: &str = "Call to unknown function";

#[test]
fn readme_lists_every_function_and_only_those() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let (supported, left_out) = readme_functions(&readme);
    assert!(supported.len() > 100, "only {} supported functions read from the README: {supported:?}", supported.len());
    assert!(left_out.contains("base64gzip"), "the left-out list was not read: {left_out:?}");

    let both: Vec<_> = supported.intersection(&left_out).collect();
    assert!(both.is_empty(), "the README lists these as supported and as left out: {both:?}");

    let implemented = implemented_functions(&root);
    let unlisted: Vec<_> = implemented.difference(&supported).collect();
    let missing: Vec<_> = supported.difference(&implemented).collect();
    assert!(
        unlisted.is_empty() && missing.is_empty(),
        "README's function list and the function table differ:\n  implemented, not listed as supported: \
         {unlisted:?}\n  listed as supported, not in the table: {missing:?}"
    );

    // The table read from the source is the one the evaluator uses.
    for name in &supported {
        let failure = call_with_no_arguments(name);
        assert_ne!(failure.as_deref(), Some(UNKNOWN_FUNCTION), "the README lists {name}, which cairn does not know");
    }
    for name in &left_out {
        let failure = call_with_no_arguments(name);
        assert_eq!(
            failure.as_deref(),
            Some(UNKNOWN_FUNCTION),
            "the README lists {name} as left out, but calling it does not fail as unknown"
        );
    }
}

#[test]
fn the_checks_see_what_they_look_for() {
    assert_eq!(
        slug("Distributing providers: sources, `cairn init`, `cairn.lock`, signatures"),
        "distributing-providers-sources-cairn-init-cairnlock-signatures"
    );
    assert_eq!(inside(Path::new("docs"), "../wit/provider.wit"), Some(PathBuf::from("wit/provider.wit")));
    assert_eq!(inside(Path::new(""), "../shared/x.md"), None);
    assert_eq!(prose("a\n```sh\nDESIGN.md\n```\nb"), "a\n\n\n\nb");
    let readme = "x\n### Functions\n\n- strings: `lower`, `upper` (`/re/` too)\n  and `trim`\n\nLeft out, and why:\n\n\
        - `gone`, `old`: not `lower`.\n- the `provider::x::` functions (`f_one`): no.\n\nAfter.\n\n### Next\n- `no`: x\n";
    let (supported, left_out) = readme_functions(readme);
    assert_eq!(supported, BTreeSet::from(["lower", "trim", "upper"].map(String::from)));
    assert_eq!(left_out, BTreeSet::from(["f_one", "gone", "old"].map(String::from)));
}
