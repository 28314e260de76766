"""The `Provider` base class, the requests its methods get, the plan helper,
and diagnostics.

Errors are exceptions: `raise ProviderError("summary", detail="…",
path=("rule", 0, "port"))` becomes an error diagnostic on that attribute
path (a `str` step is an attribute, an `int` an index, `Key("k")` a map
key). `raise Diagnostics([...])` reports several at once. Any other
exception is reported as a provider bug, with its traceback as the detail.
"""

from .values import Key, Unknown, equal, unwrap


class Diagnostic:
    """A message for the user; `severity` is "error" or "warning"."""

    def __init__(self, summary, detail="", path=(), severity="error"):
        if severity not in ("error", "warning"):
            raise ValueError(f"severity must be 'error' or 'warning', not {severity!r}")
        self.summary = summary
        self.detail = detail
        self.path = tuple(path)
        self.severity = severity

    def __repr__(self):
        return f"Diagnostic({self.severity}: {self.summary!r} at {self.path!r})"


def warning(summary, detail="", path=()):
    """A warning diagnostic, for a response's `diagnostics`."""
    return Diagnostic(summary, detail, path, "warning")


class ProviderError(Exception):
    """Fail the call with one error diagnostic."""

    def __init__(self, summary, detail="", path=()):
        super().__init__(summary)
        self.diagnostic = Diagnostic(summary, detail, path)


class Diagnostics(Exception):
    """Fail the call with several diagnostics (at least one an error)."""

    def __init__(self, diagnostics):
        super().__init__("; ".join(d.summary for d in diagnostics))
        self.diagnostics = list(diagnostics)


class PlanRequest:
    """What `Provider.plan` gets: the lifecycle's artifacts for one resource
    instance, as Python values (dicts for objects)."""

    def __init__(self, type_name, schema, prior_state, proposed_new_state, config, prior_private=b""):
        self.type_name = type_name
        self.schema = schema
        self.prior_state = prior_state
        self.proposed_new_state = proposed_new_state
        self.config = config
        self.prior_private = bytes(prior_private)

    @property
    def is_create(self):
        """Is this the plan of a new object?"""
        return self.prior_state is None


class ApplyRequest:
    """What `Provider.apply` gets. `planned_state` is None for a delete."""

    def __init__(self, type_name, schema, prior_state, planned_state, config, planned_private, idempotency_key):
        self.type_name = type_name
        self.schema = schema
        self.prior_state = prior_state
        self.planned_state = planned_state
        self.config = config
        self.planned_private = bytes(planned_private)
        self.idempotency_key = idempotency_key

    @property
    def is_delete(self):
        """Is this the deletion of the object?"""
        return self.planned_state is None

    def planned_or(self, name, compute):
        """The planned value of attribute `name` when the plan knew it,
        otherwise `compute()`: keeps a promise the plan made."""
        v = (self.planned_state or {}).get(name)
        return compute() if v is None or isinstance(unwrap(v), Unknown) else v


class ReadRequest:
    """What `Provider.read` gets: the state as the host has it."""

    def __init__(self, type_name, schema, current_state, private):
        self.type_name = type_name
        self.schema = schema
        self.current_state = current_state
        self.private = bytes(private)


class PlanResponse:
    """A plan answer. Start from `PlanResponse.from_proposed(req)` and chain
    `.default(...)`, `.requires_replace(...)`, `.set(...)`."""

    def __init__(self, planned_state):
        self.planned_state = planned_state
        # Attribute paths (tuples of steps) whose change replaces the object.
        self.replace_paths = []
        self.planned_private = b""
        self.diagnostics = []
        self._prior = None
        self._config = {}
        # Computed attributes the configuration leaves null: the ones a plan
        # may set freely (and must leave unknown when a new object is made).
        self._free = []

    @classmethod
    def from_proposed(cls, req):
        """The default plan: the proposed new state with write-only
        attributes null; on create every computed attribute the
        configuration leaves null is unknown."""
        planned = dict(req.proposed_new_state or {})
        for name in req.schema.write_only_attributes():
            planned[name] = None
        resp = cls(planned)
        resp.planned_private = req.prior_private
        resp._prior = req.prior_state
        resp._config = req.config or {}
        resp._free = [n for n in req.schema.computed_attributes() if resp._config.get(n) is None]
        if req.is_create:
            resp._mark_free_unknown()
        return resp

    def _mark_free_unknown(self):
        for name in self._free:
            self.planned_state[name] = Unknown()

    def default(self, name, value):
        """Use `value` for the optional+computed attribute `name` when the
        configuration leaves it null. Call before `requires_replace` when
        `name` is one of the replacing attributes."""
        if self._config.get(name) is None:
            self.planned_state[name] = value
            self._free = [n for n in self._free if n != name]
        return self

    def requires_replace(self, *names):
        """Changing any of these top-level attributes replaces the object;
        when one does change (or is unknown), the free computed attributes
        become unknown, as on create."""
        replacing = False
        for name in names:
            self.requires_replace_path((name,))
            if self._prior is not None and not equal(self._prior.get(name), self.planned_state.get(name)):
                replacing = True
        if replacing:
            self._mark_free_unknown()
            self._free = []
        return self

    def requires_replace_path(self, path):
        """Changing the attribute at `path` (a tuple of steps, for a nested one) replaces the object."""
        path = tuple(path)
        if path not in self.replace_paths:
            self.replace_paths.append(path)
        return self

    def set(self, name, value):
        """Set the planned value of top-level attribute `name` (a computed
        value the provider can predict, or `Unknown()`)."""
        self.planned_state[name] = value
        return self

    def warn(self, summary, detail="", path=()):
        """Add a warning to the answer."""
        self.diagnostics.append(warning(summary, detail, path))
        return self


class ApplyResponse:
    """An apply answer with diagnostics (warnings, or an error beside a
    partly created object, which the host records as tainted). A plain
    dict (or None after a delete) returned from `apply` is the same
    without diagnostics."""

    def __init__(self, new_state, private=b"", diagnostics=()):
        self.new_state = new_state
        self.private = bytes(private)
        self.diagnostics = list(diagnostics)


class OpenResponse:
    """What `Provider.open_ephemeral` answers: `result` (the configuration
    with every computed attribute filled in), `private` bytes the host hands
    back to `renew_ephemeral` and `close_ephemeral` of this object (never
    stored), `renew_at` (when to call `renew_ephemeral`: a `datetime` or
    milliseconds since the Unix epoch; None for never), and diagnostics
    (warnings). A plain dict returned from `open_ephemeral` is the result
    alone."""

    def __init__(self, result, private=b"", renew_at=None, diagnostics=()):
        self.result = result
        self.private = bytes(private)
        self.renew_at = renew_at
        self.diagnostics = list(diagnostics)


class RenewResponse:
    """What `Provider.renew_ephemeral` answers: the object's new `private`
    bytes, when to renew again (`renew_at`, None for never), and
    diagnostics (warnings)."""

    def __init__(self, private=b"", renew_at=None, diagnostics=()):
        self.private = bytes(private)
        self.renew_at = renew_at
        self.diagnostics = list(diagnostics)


class Provider:
    """Subclass it, set `schema`, override what you need, then in the
    component's `app.py`: `Provider = cairn_provider.export(MyProvider)`.

    The host may make a fresh instance for any call and calls `configure`
    first on each; keep nothing else between calls.
    """

    #: The `ProviderSchema`. Must not depend on configuration.
    schema = None

    def configure(self, config):
        """Read the `provider` block (None when there is none)."""

    def validate(self, type_name, config):
        """Check a resource's configuration beyond the schema; return a list
        of diagnostics or raise. Say nothing about `Unknown` values."""
        return []

    def plan(self, req):
        """Predict a create or update; return a `PlanResponse`."""
        return PlanResponse.from_proposed(req)

    def apply(self, req):
        """Create, update or delete (`req.is_delete`); return the new state
        (None after a delete) or an `ApplyResponse`."""
        raise ProviderError(f"Resource type `{req.type_name}` cannot be applied",
                            detail="The provider does not implement apply.")

    def read(self, req):
        """Refresh: the object as it is now, or None when it is gone."""
        return req.current_state

    def read_data_source(self, type_name, config):
        """Return `config` with every computed attribute filled in."""
        raise ProviderError(f"Unknown data source `{type_name}`")

    def import_resource(self, type_name, id):
        """The state of an existing object, for adoption."""
        raise ProviderError(f"Resource type `{type_name}` does not support import")

    def upgrade_state(self, type_name, version, raw_state):
        """A state stored with schema `version` (a dict parsed from JSON) in
        the current layout. The default accepts the current version only."""
        current = self.schema.resources[type_name].version
        if version != current:
            raise ProviderError(f"Cannot upgrade `{type_name}` state from version {version}",
                                detail=f"The provider's schema is at version {current}, and it has no "
                                       f"upgrade from version {version}.")
        return raw_state

    # Ephemeral resources (`ephemeral "TYPE" "NAME" {}`): declared in
    # `ProviderSchema(ephemeral_resources={...})`, exported with
    # `export_ephemeral_resources`.

    def validate_ephemeral(self, type_name, config):
        """Check an ephemeral resource's configuration beyond the schema;
        return a list of diagnostics or raise. Say nothing about `Unknown`
        values."""
        return []

    def open_ephemeral(self, type_name, config):
        """Open one object (`config` fully known); return an `OpenResponse`,
        or the result dict alone."""
        raise ProviderError(f"Ephemeral resource type `{type_name}` cannot be opened",
                            detail="The provider does not implement open_ephemeral.")

    def renew_ephemeral(self, type_name, private):
        """Keep an open object alive; return a `RenewResponse` (None keeps
        the private bytes and asks for no further renewal). Called only when
        `open_ephemeral` or an earlier renewal gave a `renew_at`."""
        raise ProviderError(f"Ephemeral resource type `{type_name}` cannot be renewed",
                            detail="The provider asked for a renewal but does not implement renew_ephemeral.")

    def close_ephemeral(self, type_name, private):
        """Close an open object (revoke, end a session); may return a list of
        warnings. Called once for every successful open."""
        return []


__all__ = ["ApplyRequest", "ApplyResponse", "Diagnostic", "Diagnostics", "Key", "OpenResponse", "PlanRequest",
           "PlanResponse", "Provider", "ProviderError", "ReadRequest", "RenewResponse", "warning"]
