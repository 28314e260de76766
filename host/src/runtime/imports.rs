//! What each import a provider component may use gives it, and what in the
//! sandbox decides how far it reaches: the sandbox policy in words, for
//! `cairn providers inspect`.

/// What an import gives a provider, and what decides how far it reaches.
pub fn describe_import(import: &str) -> &'static str {
    let interface = import.split('@').next().unwrap_or(import);
    match interface {
        "cairn:provider/log" => "log lines (to the host's log, rate-limited)",
        "cairn:provider/files" => "permission changes: only inside the directories granted with read_write",
        "cairn:provider/types" => "the provider ABI's types",
        "wasi:filesystem/types" | "wasi:filesystem/preopens" => {
            "files: only the directories granted with read_only / read_write"
        }
        "wasi:cli/environment" => "environment variables: only those granted with env",
        "wasi:http/outgoing-handler" => "outgoing HTTP: only the origins granted with http { url = … }",
        "wasi:http/types" => "HTTP requests and responses (see outgoing-handler)",
        "wasi:sockets/tcp" | "wasi:sockets/tcp-create-socket" => {
            "TCP: outgoing connections only to the targets granted with connect = [\"host:port\"] \
             (no bind, no listen; sockets count against max_descriptors)"
        }
        "wasi:sockets/udp" | "wasi:sockets/udp-create-socket" => "UDP: always denied",
        "wasi:sockets/ip-name-lookup" => {
            "name lookup: only the names granted with connect, answered with the addresses the host pinned"
        }
        "wasi:sockets/network" | "wasi:sockets/instance-network" => "the network handle of the TCP and lookup calls",
        "wasi:cli/stdout" | "wasi:cli/stderr" => "output: to the host's log, rate-limited",
        "wasi:cli/stdin" => "standard input: always empty",
        "wasi:cli/exit" => "exit: ends the call as a crash",
        "wasi:clocks/monotonic-clock" => "a clock (waits end at the call's deadline)",
        "wasi:clocks/wall-clock" => "the time of day",
        "wasi:random/random" | "wasi:random/insecure" | "wasi:random/insecure-seed" => "random numbers",
        "wasi:io/poll" | "wasi:io/streams" | "wasi:io/error" => "streams and polling (for the above)",
        _ if interface.starts_with("wasi:cli/terminal") => "terminal queries: never a terminal",
        _ => "unknown to cairn: linking fails unless the host provides it",
    }
}
