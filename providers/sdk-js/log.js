// Logging into the host: lines land in cairn's `tracing` output, tagged with
// the provider's name, filtered by CAIRN_LOG. Only usable inside a component
// (it imports the WIT `log` interface).
import { log as send } from "cairn:provider/log@0.2.0";

/** Log at trace level. */
export const trace = (message) => send("trace", String(message));
/** Log at debug level. */
export const debug = (message) => send("debug", String(message));
/** Log at info level. */
export const info = (message) => send("info", String(message));
/** Log at warn level. */
export const warn = (message) => send("warn", String(message));
/** Log at error level. */
export const error = (message) => send("error", String(message));
