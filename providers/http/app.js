// The `http` provider: HTTP requests as a data source, like Terraform's
// `http` provider.
//
// Data source `http`: sends `method` (default GET) to `url` with
// `request_headers` and `request_body`, and reads `status_code`,
// `response_body`, `response_headers` and `id` (the URL). The request goes
// through the host's wasi:http, so it only leaves the sandbox when the
// operator granted the URL's origin with `sandbox { http { url = "…" } }`;
// credentials belong in that grant's headers, not in configuration.
import { STRING, NUMBER, mapOf, exportProvider, ProviderError } from "../sdk-js/cairn-provider.js";
import * as log from "../sdk-js/log.js";

const HTTP = {
  version: 0,
  description: "An HTTP request and its response.",
  attributes: {
    url: { type: STRING, required: true, description: "The URL to request (http or https)." },
    method: { type: STRING, optional: true, description: "The request method; GET when unset." },
    request_headers: { type: mapOf(STRING), optional: true, description: "Headers to send." },
    request_body: { type: STRING, optional: true, description: "The request body." },
    status_code: { type: NUMBER, computed: true, description: "The response's status code." },
    response_body: { type: STRING, computed: true, description: "The response body, as text." },
    response_headers: { type: mapOf(STRING), computed: true, description: "The response headers (lowercase names)." },
    id: { type: STRING, computed: true, description: "The URL." },
  },
};

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export const provider = exportProvider({
  schema: { dataSources: { http: HTTP } },

  async readDataSource(_typeName, config) {
    const url = config.url;
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      throw new ProviderError(`Invalid URL ${JSON.stringify(url)}`, { path: ["url"] });
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ProviderError(`Unsupported URL scheme ${JSON.stringify(parsed.protocol)}`, {
        detail: "Only http and https URLs can be requested.",
        path: ["url"],
      });
    }
    const method = (config.method ?? "GET").toUpperCase();
    if (!METHODS.includes(method)) {
      throw new ProviderError(`Unsupported method ${JSON.stringify(config.method)}`, {
        detail: `Use one of ${METHODS.join(", ")}.`,
        path: ["method"],
      });
    }
    const headers = Object.fromEntries(config.request_headers ?? new Map());
    let response;
    try {
      response = await fetch(url, { method, headers, body: config.request_body ?? undefined });
    } catch (e) {
      throw new ProviderError(`Request to ${url} failed: ${e.message}`, {
        detail:
          "The provider reaches only the origins the operator grants. If this one should be reachable, " +
          `grant it in the provider's sandbox block: http { url = "${parsed.origin}" }.`,
        path: ["url"],
      });
    }
    const body = await response.text();
    log.info(`${method} ${url}: ${response.status} (${body.length} characters)`);
    return {
      ...config,
      status_code: response.status,
      response_body: body,
      response_headers: new Map([...response.headers].map(([k, v]) => [k.toLowerCase(), v])),
      id: url,
    };
  },
});
