// A test provider (JavaScript SDK) with an ephemeral resource type, for the
// e2e tests of ephemeral resources (`tests/tests/all/javascript.rs`).
// componentize-js has no file system, so everything the provider wants a
// test to see is POSTed to the provider's `store` (a loopback server the
// test runs, granted with `sandbox { http { url = … } }`):
//
// - `ephemeral "jstoken_token"`: open makes a fresh random `value` (POST
//   /values) and asks to be renewed at once; every open, renew and close is
//   POSTed to /events.
// - `resource "jstoken_sink"`: takes a token through the write-only
//   `secret` and POSTs it to /sink/NAME. Its plan and apply take
//   IN_USE_MS: the token's renewal, asked for at once, then comes while
//   the token is in use, before the run closes it, on any machine (without
//   it, a fast plan could close the token before the host's renewal task
//   ran, and the test would see no renewal).
import {
  NUMBER, STRING, ProviderError, exportEphemeralResources, exportProvider, openResponse, planFromProposed,
} from "../../sdk-js/cairn-provider.js";

async function post(store, path, body) {
  const response = await fetch(`${store}${path}`, { method: "POST", body });
  if (!response.ok) throw new ProviderError(`The store answered ${response.status} to POST ${path}`);
}

const text = (bytes) => new TextDecoder().decode(bytes);

const IN_USE_MS = 500;

// Waits `ms` (the SDK's calls are synchronous here: a busy wait).
function inUse(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // waiting
  }
}

export const provider = exportProvider({
  schema: {
    provider: {
      attributes: {
        store: { type: STRING, required: true, description: "Where the provider POSTs what it does." },
      },
    },
    resources: {
      jstoken_sink: {
        version: 0,
        attributes: {
          name: { type: STRING, required: true },
          secret: { type: STRING, optional: true, writeOnly: true },
          secret_length: { type: NUMBER, computed: true },
        },
      },
    },
    ephemeralResources: {
      jstoken_token: {
        attributes: {
          audience: { type: STRING, required: true },
          value: { type: STRING, computed: true, sensitive: true },
        },
      },
    },
  },

  configure(config) {
    this.store = config.store;
  },

  plan(req) {
    inUse(IN_USE_MS);
    return planFromProposed(req).requiresReplace("name");
  },

  async apply(req) {
    if (req.isDelete) return null;
    inUse(IN_USE_MS);
    const secret = req.config.secret ?? "";
    await post(this.store, `/sink/${req.plannedState.name}`, secret);
    return { ...req.plannedState, secret: null, secret_length: secret.length };
  },

  validateEphemeral(_type, config) {
    if (config.audience === "") throw new ProviderError("`audience` must not be empty", { path: ["audience"] });
  },

  async openEphemeral(_type, config) {
    if (config.audience === "unreachable") throw new Error("the token service is unreachable");
    const value = `jstok-${crypto.randomUUID()}`;
    await post(this.store, "/values", value);
    await post(this.store, "/events", `open ${config.audience}`);
    return openResponse({ ...config, value }, { private: `${config.audience} 0`, renewAt: Date.now() });
  },

  async renewEphemeral(_type, priv) {
    const [audience, count] = text(priv).split(" ");
    const next = Number(count) + 1;
    await post(this.store, "/events", `renew ${audience} ${next}`);
    // Once renewed, the lease lasts for the rest of the run.
    return { private: `${audience} ${next}`, renewAt: null };
  },

  async closeEphemeral(_type, priv) {
    const [audience, count] = text(priv).split(" ");
    await post(this.store, "/events", `close ${audience} ${count}`);
  },
});

export const ephemeralResources = exportEphemeralResources(provider);
