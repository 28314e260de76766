//! Outgoing HTTP (wasi:http) as far as the sandbox grants it.
//!
//! Every request a provider sends passes [`HttpPolicy::send_request`] after
//! the provider has handed it over: its `scheme://host:port` must match one
//! of the sandbox's [`HttpGrant`]s, or it is refused with `HTTP request
//! denied` and never leaves the host. A granted request gets the grant's
//! headers (credentials the operator configured), set here, on the host's
//! copy of the request: the provider cannot read them through any WASI
//! call, since the request's `fields` it holds are its own.
//!
//! Raw sockets and name lookup stay denied (see `sandbox`): the host, not
//! the provider, resolves the granted host name and connects.

use std::time::{Duration, Instant};

use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::sandbox::HttpGrant;

/// The `wasi:http` hooks of one provider instance.
pub(crate) struct HttpPolicy {
    provider: std::sync::Arc<str>,
    grants: Vec<HttpGrant>,
    /// When the call in progress must end: no request waits past it.
    pub(crate) deadline: Option<Instant>,
    /// The origins refused in the call in progress (a few, each once), for
    /// its error if it fails (see `denials`).
    pub(crate) refused: Vec<String>,
}

/// The most refused origins one call keeps.
const MAX_REFUSED: usize = 8;

impl HttpPolicy {
    pub(crate) fn new(provider: std::sync::Arc<str>, grants: Vec<HttpGrant>, deadline: Option<Instant>) -> HttpPolicy {
        HttpPolicy { provider, grants, deadline, refused: Vec::new() }
    }

    /// The grant a request to `uri` falls under, if any.
    fn grant_for(&self, uri: &http::Uri) -> Option<&HttpGrant> {
        let scheme = uri.scheme_str()?;
        let host = uri.host()?;
        let port = uri.port_u16().or(match scheme {
            "https" => Some(443),
            "http" => Some(80),
            _ => None,
        })?;
        self.grants.iter().find(|g| g.matches(scheme, host, port))
    }

    /// The request's timeouts, none past the call's deadline (plus one epoch
    /// tick, so that the deadline's trap, not the request, ends the call).
    fn bounded(&self, options: Option<RequestOptions>, now: Instant) -> RequestOptions {
        let left = self.deadline.map(|d| d.saturating_duration_since(now) + super::engine::EPOCH_TICK);
        let cap = |t: Option<Duration>| match (t, left) {
            (Some(t), Some(left)) => Some(t.min(left)),
            (t, left) => t.or(left),
        };
        let options = options.unwrap_or_default();
        RequestOptions {
            connect_timeout: cap(options.connect_timeout),
            first_byte_timeout: cap(options.first_byte_timeout),
            between_bytes_timeout: cap(options.between_bytes_timeout),
        }
    }
}

type ResponseFuture = Box<
    dyn Future<Output = Result<(http::Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>), Error>>
        + Send,
>;

impl WasiHttpHooks for HttpPolicy {
    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> ResponseFuture {
        let Some(grant) = self.grant_for(request.uri()) else {
            let origin = format!(
                "{}://{}",
                request.uri().scheme_str().unwrap_or("?"),
                request.uri().authority().map_or("?", |a| a.as_str())
            );
            tracing::warn!(
                provider = %self.provider,
                "denied an HTTP request to {origin} (not granted in the provider's sandbox)",
            );
            if self.refused.len() < MAX_REFUSED && !self.refused.contains(&origin) {
                self.refused.push(origin);
            }
            return Box::new(async { Err(Error::HttpRequestDenied) });
        };
        for (name, value) in &grant.headers {
            // Names and values were checked when the sandbox was made.
            if let (Ok(name), Ok(value)) =
                (http::HeaderName::try_from(name.as_str()), http::HeaderValue::try_from(value.as_str()))
            {
                request.headers_mut().insert(name, value);
            }
        }
        tracing::debug!(provider = %self.provider, "HTTP {} {}", request.method(), request.uri());
        let options = self.bounded(options, Instant::now());
        drop(fut);
        Box::new(async move {
            use http_body_util::BodyExt;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            Ok((response.map(BodyExt::boxed_unsync), Box::new(io) as Box<dyn Future<Output = _> + Send>))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> HttpPolicy {
        let grant = HttpGrant {
            scheme: "http".into(),
            host: "127.0.0.1".into(),
            port: 8080,
            headers: vec![("authorization".into(), "Bearer s3cret".into())],
        };
        HttpPolicy::new("p".into(), vec![grant], None)
    }

    #[test]
    fn requests_fall_under_a_grant_by_origin() {
        let policy = policy();
        let uri = |s: &str| s.parse::<http::Uri>().unwrap();
        assert!(policy.grant_for(&uri("http://127.0.0.1:8080/x?y")).is_some());
        assert!(policy.grant_for(&uri("http://127.0.0.1:8081/")).is_none());
        assert!(policy.grant_for(&uri("https://127.0.0.1:8080/")).is_none());
        assert!(policy.grant_for(&uri("http://localhost:8080/")).is_none());
        assert!(policy.grant_for(&uri("/relative")).is_none());
    }

    #[test]
    fn timeouts_end_at_the_call_deadline() {
        let mut policy = policy();
        let now = Instant::now();
        policy.deadline = Some(now + Duration::from_secs(5));
        let options = policy.bounded(
            Some(RequestOptions {
                connect_timeout: Some(Duration::from_secs(600)),
                first_byte_timeout: Some(Duration::from_secs(1)),
                between_bytes_timeout: None,
            }),
            now,
        );
        let left = Duration::from_secs(5) + super::super::engine::EPOCH_TICK;
        assert_eq!(options.connect_timeout, Some(left));
        assert_eq!(options.first_byte_timeout, Some(Duration::from_secs(1)));
        assert_eq!(options.between_bytes_timeout, Some(left));
        let late = policy.bounded(None, now + Duration::from_secs(60));
        assert_eq!(late.connect_timeout, Some(super::super::engine::EPOCH_TICK));
    }
}
