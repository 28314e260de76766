//! File and path functions: `file`, `filebase64`, `fileexists`, `fileset`,
//! the file hashes (`filemd5`, `filesha256`, …), and the path text functions
//! `basename`, `dirname`, `abspath`, `pathexpand`.
//!
//! Configuration is code a user may have downloaded, so these functions read
//! only inside the configuration directory: a path must be relative, must
//! not climb out with `..`, and must still be inside once symbolic links are
//! followed. Otherwise `file("../../.ssh/id_rsa")` would put a secret into a
//! plan.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::value::Value;

use super::{Args, FnError};

/// `file(path)`: a UTF-8 file's contents.
pub(super) fn file(args: &Args) -> Result<Value, FnError> {
    let bytes = read(args, "file")?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| FnError::arg(0, "the file's contents are not valid UTF-8; use filebase64 to read binary files"))
}

/// `filebase64(path)`: any file's contents, base64-encoded.
pub(super) fn filebase64(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(STANDARD.encode(read(args, "filebase64")?)))
}

/// `fileset(path, pattern)`: the files below directory `path` (inside the
/// configuration directory) whose path relative to it matches the glob
/// `pattern` (`*` and `?` within a name, `**` across directories, `[…]`,
/// `{a,b}`), as a set of `/`-separated relative paths.
pub(super) fn fileset(args: &Args) -> Result<Value, FnError> {
    let root = inside_dir(args, "fileset")?;
    let pattern = args.string(1)?;
    let glob = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| FnError::arg(1, format!("invalid glob pattern {pattern:?}: {e}")))?
        .compile_matcher();
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&root).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| FnError::call(format!("cannot list {}: {e}", root.display())))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let relative: Vec<&str> = relative.components().filter_map(|c| c.as_os_str().to_str()).collect();
        let relative = relative.join("/");
        if glob.is_match(&relative) {
            found.push(Value::String(relative));
        }
    }
    Ok(Value::set(found))
}

/// `filemd5(path)` and its kin: a digest of a file's bytes, in hex or base64.
fn file_digest(args: &Args, function: &str, digest: fn(&[u8]) -> Vec<u8>, base64: bool) -> Result<Value, FnError> {
    let digest = digest(&read(args, function)?);
    Ok(Value::String(if base64 { STANDARD.encode(digest) } else { hex::encode(digest) }))
}

fn md5_of(bytes: &[u8]) -> Vec<u8> {
    use md5::Digest as _;
    md5::Md5::digest(bytes).to_vec()
}

fn sha1_of(bytes: &[u8]) -> Vec<u8> {
    use sha1::Digest as _;
    sha1::Sha1::digest(bytes).to_vec()
}

fn sha256_of(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).to_vec()
}

fn sha512_of(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha512::digest(bytes).to_vec()
}

pub(super) fn filemd5(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filemd5", md5_of, false)
}

pub(super) fn filesha1(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filesha1", sha1_of, false)
}

pub(super) fn filesha256(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filesha256", sha256_of, false)
}

pub(super) fn filesha512(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filesha512", sha512_of, false)
}

pub(super) fn filebase64sha256(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filebase64sha256", sha256_of, true)
}

pub(super) fn filebase64sha512(args: &Args) -> Result<Value, FnError> {
    file_digest(args, "filebase64sha512", sha512_of, true)
}

/// `abspath(path)`: the path made absolute from the configuration
/// directory (Terraform's is from the working directory, which is where
/// cairn's relative paths start), `.` and `..` resolved as text.
pub(super) fn abspath(args: &Args) -> Result<Value, FnError> {
    let given = args.string(0)?;
    let base = std::path::absolute(args.dir())
        .map_err(|e| FnError::call(format!("cannot resolve {}: {e}", args.dir().display())))?;
    let mut path = PathBuf::new();
    for component in base.join(&given).components() {
        match component {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            other => path.push(other),
        }
    }
    Ok(Value::String(path.to_string_lossy().into_owned()))
}

/// `pathexpand(path)`: a leading `~` replaced by the home directory.
pub(super) fn pathexpand(args: &Args) -> Result<Value, FnError> {
    let given = args.string(0)?;
    let rest = match given.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return Ok(Value::String(given)),
    };
    let home = std::env::var("HOME").map_err(|_| FnError::call("HOME is not set"))?;
    Ok(Value::String(format!("{home}{rest}")))
}

/// `fileexists(path)`: whether a regular file is there.
pub(super) fn fileexists(args: &Args) -> Result<Value, FnError> {
    let path = inside_dir(args, "fileexists")?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            Err(FnError::arg(0, format!("\"{}\" is a directory, not a file", args.string(0)?)))
        }
        Ok(_) => Ok(Value::Bool(true)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Value::Bool(false)),
        Err(e) => Err(FnError::arg(0, format!("cannot read \"{}\": {e}", args.string(0)?))),
    }
}

fn read(args: &Args, function: &str) -> Result<Vec<u8>, FnError> {
    let path = inside_dir(args, function)?;
    let given = args.string(0)?;
    std::fs::read(&path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => FnError::arg(0, format!("no file exists at \"{given}\"")),
        ErrorKind::IsADirectory => FnError::arg(0, format!("\"{given}\" is a directory, not a file")),
        _ => FnError::arg(0, format!("cannot read \"{given}\": {e}")),
    })
}

/// The path argument resolved inside the configuration directory, or an
/// error when it points anywhere else. A path that does not exist resolves
/// to where it would be; reading it then reports that nothing is there.
fn inside_dir(args: &Args, function: &str) -> Result<PathBuf, FnError> {
    let given = args.string(0)?;
    let escape = || {
        FnError::arg(
            0,
            format!("{function}() may only read files inside the configuration directory, and \"{given}\" is not"),
        )
    };
    let path = Path::new(&given);
    if !stays_inside(path) {
        return Err(escape());
    }
    let dir = args
        .dir()
        .canonicalize()
        .map_err(|e| FnError::call(format!("cannot open the configuration directory {}: {e}", args.dir().display())))?;
    let full = dir.join(path);
    match full.canonicalize() {
        Ok(real) if real.starts_with(&dir) => Ok(real),
        // A symbolic link on the way leads outside.
        Ok(_) => Err(escape()),
        Err(_) => Ok(full),
    }
}

/// Whether a path is relative and never climbs above its starting point.
fn stays_inside(path: &Path) -> bool {
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth == 0 => return false,
            Component::ParentDir => depth -= 1,
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// `basename(path)`: the last part of a path, as Go's `filepath.Base`
/// (Terraform's): `""` is `"."`, a path of only separators is `"/"`.
pub(super) fn basename(args: &Args) -> Result<Value, FnError> {
    let path = args.string(0)?;
    let trimmed = path.trim_end_matches('/');
    Ok(Value::string(match (path.is_empty(), trimmed.is_empty()) {
        (true, _) => ".",
        (false, true) => "/",
        _ => trimmed.rsplit('/').next().unwrap_or(trimmed),
    }))
}

/// `dirname(path)`: all but the last part of a path, as Go's
/// `filepath.Dir` (Terraform's): `"."` when there is no directory.
pub(super) fn dirname(args: &Args) -> Result<Value, FnError> {
    let path = args.string(0)?;
    let dir = match path.rfind('/') {
        None => ".".to_string(),
        Some(0) => "/".to_string(),
        Some(i) => {
            let dir = path[..i].trim_end_matches('/');
            if dir.is_empty() { "/".to_string() } else { dir.to_string() }
        }
    };
    Ok(Value::String(dir))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{eval_in, shown, write_dir};
    use super::*;
    use crate::config::EvalContext;

    /// A configuration directory `config/` next to a `secret.txt` outside it.
    fn setup() -> (tempfile::TempDir, EvalContext) {
        let root = write_dir(&[
            ("config/hello.txt", "hello\n"),
            ("config/sub/inner.txt", "inner"),
            ("config/bin.dat", ""),
            ("secret.txt", "secret"),
        ]);
        std::fs::write(root.path().join("config/bin.dat"), [0xff, 0x00]).unwrap();
        let ctx = EvalContext::new(root.path().join("config"));
        (root, ctx)
    }

    fn ok(text: &str, ctx: &EvalContext) -> Value {
        eval_in(text, ctx).unwrap_or_else(|d| panic!("{text}: {}", shown(&d)))
    }

    fn err(text: &str, ctx: &EvalContext) -> String {
        shown(&eval_in(text, ctx).expect_err(text))
    }

    #[test]
    fn reads_files_inside() {
        let (_root, ctx) = setup();
        assert_eq!(ok("file(\"hello.txt\")", &ctx), Value::string("hello\n"));
        assert_eq!(ok("file(\"${path.module}/sub/../hello.txt\")", &ctx), Value::string("hello\n"));
        assert_eq!(ok("file(\"./sub/inner.txt\")", &ctx), Value::string("inner"));
        assert_eq!(ok("filebase64(\"bin.dat\")", &ctx), Value::string("/wA="));
        assert_eq!(ok("fileexists(\"hello.txt\")", &ctx), Value::Bool(true));
        assert_eq!(ok("fileexists(\"nope.txt\")", &ctx), Value::Bool(false));
        assert!(err("file(\"nope.txt\")", &ctx).contains("no file exists at \"nope.txt\""));
        assert!(err("file(\"sub\")", &ctx).contains("is a directory"));
        assert!(err("fileexists(\"sub\")", &ctx).contains("is a directory"));
        assert!(err("file(\"bin.dat\")", &ctx).contains("use filebase64"));
    }

    #[test]
    fn refuses_to_escape_the_directory() {
        let (root, ctx) = setup();
        let outside = root.path().join("secret.txt");
        for path in ["../secret.txt", "sub/../../secret.txt", outside.to_str().unwrap(), "/etc/passwd"] {
            let shown = err(&format!("file({})", crate::value::quote(path)), &ctx);
            assert!(shown.contains("file() may only read files inside the configuration directory"), "{path}: {shown}");
        }
        // Even where nothing exists, climbing out is refused rather than answered.
        assert!(err("fileexists(\"../nothing\")", &ctx).contains("fileexists() may only read files inside"));
        assert!(err("fileexists(\"../secret.txt\")", &ctx).contains("fileexists() may only read files inside"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symbolic_links_that_lead_out() {
        let (root, ctx) = setup();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), root.path().join("config/link.txt")).unwrap();
        std::os::unix::fs::symlink(root.path(), root.path().join("config/up")).unwrap();
        std::os::unix::fs::symlink("hello.txt", root.path().join("config/alias.txt")).unwrap();
        assert!(err("file(\"link.txt\")", &ctx).contains("file() may only read files inside"));
        assert!(err("file(\"up/secret.txt\")", &ctx).contains("file() may only read files inside"));
        assert!(err("fileexists(\"link.txt\")", &ctx).contains("fileexists() may only read files inside"));
        // A link that stays inside is fine.
        assert_eq!(ok("file(\"alias.txt\")", &ctx), Value::string("hello\n"));
    }

    #[test]
    fn file_hashes_and_sets_agree_with_terraform() {
        // Each figure checked with `terraform console` 1.11.4 on a file of "hi\n".
        let (root, ctx) = setup();
        std::fs::write(root.path().join("config/a.txt"), "hi\n").unwrap();
        let s = Value::string;
        assert_eq!(ok("filemd5(\"a.txt\")", &ctx), s("764efa883dda1e11db47671c4a3bbd9e"));
        assert_eq!(ok("filesha1(\"a.txt\")", &ctx), s("55ca6286e3e4f4fba5d0448333fa99fc5a404a73"));
        assert_eq!(
            ok("filesha256(\"a.txt\")", &ctx),
            s("98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4")
        );
        assert_eq!(
            ok("filesha512(\"a.txt\")", &ctx),
            s(
                "d78abb0542736865f94704521609c230dac03a2f369d043ac212d6933b91410e06399e37f9c5cc88436a31737330c1c8eccb2c2f9f374d62f716432a32d50fac"
            )
        );
        assert_eq!(ok("filebase64sha256(\"a.txt\")", &ctx), s("mOpuTyFvL7S2n/+bOkSELDhobKaF8/VdxIxdP7EQe+Q="));
        assert_eq!(
            ok("filebase64sha512(\"a.txt\")", &ctx),
            s("14q7BUJzaGX5RwRSFgnCMNrAOi82nQQ6whLWkzuRQQ4GOZ43+cXMiENqMXNzMMHI7MssL583TWL3FkMqMtUPrA==")
        );
        assert!(err("filesha256(\"../secret.txt\")", &ctx).contains("filesha256() may only read files inside"));
        // developer.hashicorp.com/terraform/language/functions/fileset: `*` stays in one directory, `**` does not.
        assert_eq!(ok("fileset(path.module, \"*.txt\")", &ctx), Value::set(vec![s("a.txt"), s("hello.txt")]));
        assert_eq!(
            ok("fileset(path.module, \"**/*.txt\")", &ctx),
            Value::set(vec![s("a.txt"), s("hello.txt"), s("sub/inner.txt")])
        );
        assert_eq!(ok("fileset(\"sub\", \"*\")", &ctx), Value::set(vec![s("inner.txt")]));
        assert!(err("fileset(\"..\", \"*\")", &ctx).contains("fileset() may only read files inside"));
        // …/functions/abspath and …/functions/pathexpand
        let absolute = ok("abspath(\"sub/../x\")", &ctx);
        assert_eq!(absolute.as_str().map(std::path::Path::new), Some(root.path().join("config/x").as_path()));
        assert!(ok("pathexpand(\"~/x\")", &ctx).as_str().is_some_and(|p| p.ends_with("/x") && !p.starts_with('~')));
        assert_eq!(ok("pathexpand(\"a/~\")", &ctx), s("a/~"));
    }
}
