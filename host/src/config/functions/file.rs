//! File functions: `file`, `filebase64`, `fileexists`.
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
}
