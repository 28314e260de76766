"""The `archive` provider: zip files, like Terraform's `archive` provider.

Resource `archive_file` zips `source_file` (one file) or `source_dir` (a
directory tree), read through a read-only grant, into `output_path` in a
read-write grant. Every argument forces a replacement (as in Terraform), so
there is no in-place update. The archive is deterministic (sorted entries,
fixed timestamps), so the same sources always give the same bytes:

- plan rebuilds the archive in memory from the current sources; when its
  SHA-256 is not the stored `output_sha256` (the sources or the output file
  changed), `output_sha256` is planned unknown and the object replaced;
- read reports the object gone when the output file is missing, and puts the
  file's real SHA-256 and size in the state when it was changed, so the next
  plan rebuilds it;
- delete removes the output file (already gone is fine).
"""

import hashlib
import io
import os
import zipfile

from cairn_provider import (STRING, NUMBER, Attr, PlanResponse, Provider, ProviderError, ProviderSchema, Schema,
                            Unknown, export, log)

# 1980-01-01, the earliest time a zip entry can hold: fixed so that the
# archive's bytes depend on the sources' names and contents only.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)

ARCHIVE_FILE = Schema(0, description="A zip archive of a file or a directory.", attributes={
    "type": Attr(STRING, required=True, description='The archive format; only "zip".'),
    "source_file": Attr(STRING, optional=True, description="A file to archive (in a read-only grant)."),
    "source_dir": Attr(STRING, optional=True, description="A directory to archive, recursively."),
    "output_path": Attr(STRING, required=True, description="Where to write the archive (in a read-write grant)."),
    "output_sha256": Attr(STRING, computed=True, description="SHA-256 of the archive, lowercase hex."),
    "output_size": Attr(NUMBER, computed=True, description="Size of the archive in bytes."),
    "id": Attr(STRING, computed=True, description="SHA-1 of the archive, lowercase hex (as Terraform's)."),
})

INPUTS = ("type", "source_file", "source_dir", "output_path")


class Archive(Provider):
    schema = ProviderSchema(resources={"archive_file": ARCHIVE_FILE})

    def validate(self, type_name, config):
        kind = config.get("type")
        if isinstance(kind, str) and kind != "zip":
            raise ProviderError(f"Unsupported archive type \"{kind}\"", detail='The only type is "zip".',
                                path=("type",))
        file, folder = config.get("source_file"), config.get("source_dir")
        if file is None and folder is None:
            raise ProviderError("Nothing to archive", detail="Set `source_file` or `source_dir`.",
                                path=("source_file",))
        if file is not None and folder is not None and not isinstance(file, Unknown) \
                and not isinstance(folder, Unknown):
            raise ProviderError("Both `source_file` and `source_dir` are set", detail="Set one of them.",
                                path=("source_dir",))
        return []

    def plan(self, req):
        resp = PlanResponse.from_proposed(req)
        if req.prior_state is not None and all(_known_str(req.config.get(n)) for n in INPUTS if req.config.get(n)):
            # The sources (or the output file) may have changed since apply:
            # rebuild in memory and compare. Read-only grants are readable
            # at plan time.
            data = build(req.config)
            if hashlib.sha256(data).hexdigest() != req.prior_state.get("output_sha256"):
                resp.set("output_sha256", Unknown(not_null=True)).set("output_size", Unknown(not_null=True))
                resp.set("id", Unknown(not_null=True))
                resp.requires_replace_path(("output_sha256",))
        return resp.requires_replace(*INPUTS)

    def apply(self, req):
        if req.is_delete:
            remove(req.prior_state["output_path"])
            return None
        state = dict(req.planned_state)
        data = build(state)
        path = state["output_path"]
        write(path, data)
        log.info(f"wrote {path} ({len(data)} bytes)")
        state.update(describe(data))
        return state

    def read(self, req):
        state = dict(req.current_state)
        path = state["output_path"]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise io_error("read", path, e, "read_write", ("output_path",))
        # What is on disk is the truth: a changed file shows in the state,
        # and the next plan (which rebuilds from the sources) replaces it.
        state.update(describe(data))
        return state


def _known_str(v):
    return isinstance(v, str)


def describe(data):
    """The computed attributes of an archive's bytes."""
    return {"output_sha256": hashlib.sha256(data).hexdigest(), "output_size": len(data),
            "id": hashlib.sha1(data).hexdigest()}


def build(config):
    """The zip archive of the configured source, as bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        if config.get("source_file") is not None:
            path = config["source_file"]
            add(z, path, os.path.basename(path), ("source_file",))
        else:
            root = config["source_dir"]
            if not os.path.isdir(root):
                raise ProviderError(f"Cannot read the directory {root}", path=("source_dir",),
                                    detail=f"It does not exist, or it is outside every grant: grant it with "
                                           f"`read_only = [\"{root}\"]` in the provider's sandbox block.")
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()  # walk in a fixed order
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    add(z, full, os.path.relpath(full, root), ("source_dir",))
    return buf.getvalue()


def add(z, path, name, attr):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise io_error("read", path, e, "read_only", attr)
    info = zipfile.ZipInfo(name.replace(os.sep, "/"), date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    z.writestr(info, data)


def write(path, data):
    try:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise io_error("write", path, e, "read_write", ("output_path",))


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass  # already gone is what delete wants
    except OSError as e:
        raise io_error("delete", path, e, "read_write", ("output_path",))


def io_error(verb, path, e, grant, attr):
    """A diagnostic that says which directory to grant."""
    folder = os.path.dirname(path) or "."
    return ProviderError(f"Cannot {verb} {path}: {e.strerror or e}", path=attr,
                         detail=f"The provider sees only the directories granted to it. Grant this one with "
                                f"`{grant} = [\"./{folder.removeprefix('./')}\"]` in the provider's sandbox block.")


Provider = export(Archive)
