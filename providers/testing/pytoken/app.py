"""A test provider (Python SDK) with an ephemeral resource type, for the e2e
tests of ephemeral resources (`tests/tests/all/python.rs`).

Each call a test looks for is a line of cairn's log (`CAIRN_LOG=info`):
while planning the sandbox lets the provider write no file, and a token is
opened then too. A token's value is never logged, only its SHA-256.

- `ephemeral "pytoken_token"`: `open` makes a fresh random `value`
  (`pytok-` and hex digits, so a test can look for any token anywhere) and
  asks to be renewed at once; `renew` and `close` count on.
- `resource "pytoken_sink"`: takes a token through the write-only `secret`
  and writes what it got to `sink-NAME.txt` in `log_dir` (while applying).
  Its plan and apply take `IN_USE_SECONDS`: the token's renewal, asked for
  at once, then comes while the token is in use, before the run closes it,
  on any machine (without it, a fast plan could close the token before the
  host's renewal task ran, and the test would see no renewal).
"""

import hashlib
import os
import secrets
import time

from cairn_provider import (NUMBER, STRING, Attr, OpenResponse, PlanResponse, Provider, ProviderError,
                            ProviderSchema, RenewResponse, Schema, export, export_ephemeral_resources, log)


IN_USE_SECONDS = 0.5


def event(text):
    """A line of cairn's log that a test looks for."""
    log.info(f"pytoken event: {text}")


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


class Tokens(Provider):
    schema = ProviderSchema(
        provider=Schema(0, attributes={
            "log_dir": Attr(STRING, required=True, description="Granted directory the sink writes into."),
        }),
        resources={"pytoken_sink": Schema(0, attributes={
            "name": Attr(STRING, required=True),
            "secret": Attr(STRING, optional=True, write_only=True),
            "secret_length": Attr(NUMBER, computed=True),
        })},
        ephemeral_resources={"pytoken_token": Schema(0, attributes={
            "audience": Attr(STRING, required=True),
            "value": Attr(STRING, computed=True, sensitive=True),
        })},
    )

    def configure(self, config):
        self.log_dir = config["log_dir"]

    # The sink resource.

    def plan(self, req):
        time.sleep(IN_USE_SECONDS)
        return PlanResponse.from_proposed(req).requires_replace("name")

    def apply(self, req):
        if req.is_delete:
            return None
        time.sleep(IN_USE_SECONDS)
        secret = req.config.get("secret") or ""
        with open(os.path.join(self.log_dir, f"sink-{req.planned_state['name']}.txt"), "w") as f:
            f.write(secret)
        return dict(req.planned_state, secret=None, secret_length=len(secret))

    # The ephemeral token.

    def validate_ephemeral(self, type_name, config):
        if config.get("audience") == "":
            raise ProviderError("`audience` must not be empty", path=("audience",))
        return []

    def open_ephemeral(self, type_name, config):
        if config["audience"] == "unreachable":
            raise ConnectionError("the token service is unreachable")
        value = "pytok-" + secrets.token_hex(12)
        event(f"open {config['audience']} sha256={sha256(value)}")
        private = f"{config['audience']} 0".encode()
        return OpenResponse(dict(config, value=value), private=private, renew_at=int(time.time() * 1000))

    def renew_ephemeral(self, type_name, private):
        audience, count = private.decode().rsplit(" ", 1)
        count = int(count) + 1
        event(f"renew {audience} {count}")
        # Once renewed, the lease lasts for the rest of the run.
        return RenewResponse(f"{audience} {count}".encode(), renew_at=None)

    def close_ephemeral(self, type_name, private):
        audience, count = private.decode().rsplit(" ", 1)
        event(f"close {audience} {count}")
        return []


Provider = export(Tokens)
EphemeralResources = export_ephemeral_resources(Provider)
