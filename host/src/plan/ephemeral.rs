//! Ephemeral resources during one run (Terraform 1.10's `ephemeral` blocks):
//! each instance is opened on its configured provider when the plan or the
//! apply needs its values, renewed at the time the provider asks for while
//! the run goes on, and every object opened is closed once the run is done
//! with them — also when the run fails or is interrupted.
//!
//! Their values live only in the run's memory: nothing here writes them to
//! the state, the plan file, the event stream or the logs (events carry the
//! address alone).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::addr::InstanceAddr;
use crate::contract::{FailedOpen, Gate};
use crate::diag::{Diagnostic, Location};
use crate::engine::Event;
use crate::provider::Provider;
use crate::schema::Schema;
use crate::value::Value;

/// Where a session reports its operations (`Opening...`, `Closing...`).
pub type Report = Arc<dyn Fn(Event) + Send + Sync>;

/// The ephemeral objects one plan or one apply has opened.
pub struct Session {
    objects: Mutex<Vec<Arc<Opened>>>,
    /// Errors of renewals, which fail the run when it closes the objects.
    renew_errors: Mutex<Vec<Diagnostic>>,
    report: Report,
}

/// One open object.
struct Opened {
    addr: InstanceAddr,
    provider: Arc<dyn Provider>,
    location: Location,
    /// Its private bytes, behind an async lock that a renewal holds while
    /// it runs, so that `close` waits for it and gets the newest bytes.
    held: tokio::sync::Mutex<Held>,
    /// The task that renews it, when the provider asked for renewal.
    renewer: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

struct Held {
    private: Vec<u8>,
    closed: bool,
}

/// What a successful open gives the run: the object's value and the
/// provider's warnings.
pub type OpenAnswer = (Value, Vec<Diagnostic>);

impl Session {
    /// A session with nothing open yet, reporting to `report`.
    pub fn new(report: Report) -> Arc<Session> {
        Arc::new(Session { objects: Mutex::new(Vec::new()), renew_errors: Mutex::new(Vec::new()), report })
    }

    /// A session that reports nothing (for runs without a display).
    pub fn silent() -> Arc<Session> {
        Session::new(Arc::new(|_| {}))
    }

    /// Opens the instance `addr` (declared at `location`) on `provider`
    /// with its fully known `config`, after the provider's own validation;
    /// checks the answer against `schema` and keeps the object to renew
    /// and close.
    pub async fn open(
        self: &Arc<Self>,
        provider: &Arc<dyn Provider>,
        schema: &Schema,
        addr: &InstanceAddr,
        config: &Value,
        location: &Location,
    ) -> Result<OpenAnswer, Vec<Diagnostic>> {
        let gate = Gate::new(provider.as_ref());
        let mut warnings = gate.validate(addr, config).await.map_err(|e| e.into_diagnostics(location))?;
        self.started(addr, "open");
        let started = Instant::now();
        match gate.open_ephemeral(schema, addr, config).await {
            Ok(opened) => {
                self.finished(addr, "open", true, started);
                self.keep(provider, addr, location, opened.private, opened.renew_at);
                warnings.extend(opened.diagnostics.into_iter().map(|d| crate::contract::located(d, addr, location)));
                Ok((opened.result, warnings))
            }
            Err(failed) => {
                let FailedOpen { error, private } = *failed;
                self.finished(addr, "open", false, started);
                // Refused, but open on the provider's side: still closed.
                if let Some(private) = private {
                    self.keep(provider, addr, location, private, None);
                }
                Err(error.into_diagnostics(location))
            }
        }
    }

    /// Closes every object still open, each once, the last opened first;
    /// returns the errors of renewals and of the closes that failed.
    pub async fn close_all(&self) -> Vec<Diagnostic> {
        let objects = std::mem::take(&mut *self.objects.lock().unwrap_or_else(PoisonError::into_inner));
        let mut errors = Vec::new();
        for object in objects.into_iter().rev() {
            errors.extend(self.close(&object).await);
        }
        let mut renew_errors = std::mem::take(&mut *self.renew_errors.lock().unwrap_or_else(PoisonError::into_inner));
        renew_errors.extend(errors);
        renew_errors
    }

    /// How many objects are open now.
    pub fn open_count(&self) -> usize {
        self.objects.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    async fn close(&self, object: &Opened) -> Vec<Diagnostic> {
        // Waits for a renewal in flight, then stops the renewer.
        let mut held = object.held.lock().await;
        held.closed = true;
        if let Some(renewer) = object.renewer.lock().unwrap_or_else(PoisonError::into_inner).take() {
            renewer.abort();
        }
        self.started(&object.addr, "close");
        let started = Instant::now();
        let answer = object.provider.close_ephemeral(&object.addr.resource.type_name, &held.private).await;
        let errors: Vec<Diagnostic> = match answer {
            Ok(diags) => diags
                .into_iter()
                .filter(Diagnostic::is_error)
                .map(|d| crate::contract::located(d, &object.addr, &object.location))
                .collect(),
            Err(e) => vec![crate::contract::call_failed(&object.addr, &e).at(&object.location)],
        };
        self.finished(&object.addr, "close", errors.is_empty(), started);
        errors
    }

    /// Keeps an opened object, with a renewer when it asked for one.
    fn keep(
        self: &Arc<Self>,
        provider: &Arc<dyn Provider>,
        addr: &InstanceAddr,
        location: &Location,
        private: Vec<u8>,
        renew_at: Option<u64>,
    ) {
        let object = Arc::new(Opened {
            addr: addr.clone(),
            provider: Arc::clone(provider),
            location: location.clone(),
            held: tokio::sync::Mutex::new(Held { private, closed: false }),
            renewer: Mutex::new(None),
        });
        if let Some(at) = renew_at {
            let task = tokio::spawn(renew_until_closed(Arc::clone(self), Arc::clone(&object), at));
            *object.renewer.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
        }
        self.objects.lock().unwrap_or_else(PoisonError::into_inner).push(object);
    }

    fn started(&self, addr: &InstanceAddr, action: &str) {
        (self.report)(Event::EphemeralStart { address: addr.to_string(), action: action.to_string() });
    }

    fn finished(&self, addr: &InstanceAddr, action: &str, done: bool, started: Instant) {
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        (self.report)(Event::EphemeralFinish {
            address: addr.to_string(),
            action: action.to_string(),
            done,
            duration_ms,
        });
    }
}

/// Renews `object` at `at` (milliseconds since the Unix epoch), then at
/// each time the provider answers, until it is closed or the provider asks
/// for no more. A failed renewal is reported and ends the renewals: the
/// object is still closed at the end of the run.
async fn renew_until_closed(session: Arc<Session>, object: Arc<Opened>, mut at: u64) {
    loop {
        tokio::time::sleep(until(at)).await;
        let mut held = object.held.lock().await;
        if held.closed {
            return;
        }
        session.started(&object.addr, "renew");
        let started = Instant::now();
        let answer = object.provider.renew_ephemeral(&object.addr.resource.type_name, &held.private).await;
        match answer {
            Ok(renewed) if !renewed.diagnostics.iter().any(Diagnostic::is_error) => {
                session.finished(&object.addr, "renew", true, started);
                held.private = renewed.private;
                match renewed.renew_at {
                    Some(next) => at = next,
                    None => return,
                }
            }
            Ok(renewed) => {
                session.finished(&object.addr, "renew", false, started);
                let errors = renewed.diagnostics.into_iter().filter(Diagnostic::is_error);
                let errors = errors.map(|d| crate::contract::located(d, &object.addr, &object.location));
                session.renew_errors.lock().unwrap_or_else(PoisonError::into_inner).extend(errors);
                return;
            }
            Err(e) => {
                session.finished(&object.addr, "renew", false, started);
                let d = crate::contract::call_failed(&object.addr, &e).at(&object.location);
                session.renew_errors.lock().unwrap_or_else(PoisonError::into_inner).push(d);
                return;
            }
        }
    }
}

/// How long until `at`, milliseconds since the Unix epoch (zero when it
/// has passed).
fn until(at: u64) -> Duration {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Duration::from_millis(at).saturating_sub(now)
}

/// Whether an ephemeral resource instance's configuration is known enough
/// to open it: wholly. (While planning, one that is not is opened during
/// apply instead, its values unknown in the plan.)
pub fn is_openable(config: &Value) -> bool {
    config.is_wholly_known()
}

/// What opening an ephemeral resource block during apply gives: its
/// expansion, each instance's value, and the providers' warnings.
pub struct OpenedResource {
    /// Its instances.
    pub expansion: super::Expansion,
    /// Each instance's value.
    pub values: Vec<(InstanceAddr, Value)>,
    /// The providers' warnings.
    pub warnings: Vec<Diagnostic>,
}

/// Opens every instance of the ephemeral resource block `resource` on
/// `provider` during apply, `ctx` holding the values of what it reads
/// (applied by now): its preconditions first, its postconditions on the
/// opened value. Its configuration must be wholly known by now.
pub async fn open_resource(
    session: &Arc<Session>,
    resource: &crate::config::Resource,
    provider: &Arc<dyn Provider>,
    ctx: &crate::config::EvalContext,
) -> Result<OpenedResource, Vec<Diagnostic>> {
    let schema = Gate::new(provider.as_ref()).schema_of(&resource.addr).map_err(|d| vec![d.at(&resource.location)])?;
    let expansion = super::values::expand(resource, ctx)?;
    let mut opened = OpenedResource { expansion: expansion.clone(), values: Vec::new(), warnings: Vec::new() };
    for key in expansion.instance_keys() {
        let addr = InstanceAddr { resource: resource.addr.clone(), key };
        let inst_ctx = crate::config::EvalContext {
            resources: ctx.resources.clone(),
            phase: ctx.phase,
            ..super::values::instance_context(ctx, &expansion, addr.key.as_ref())
        };
        let failed = super::preconditions_failed(resource, &inst_ctx);
        if !failed.is_empty() {
            return Err(failed);
        }
        let config = crate::config::decode_body(&resource.body, &schema.block, &inst_ctx)?;
        if !is_openable(&config) {
            return Err(vec![not_known_at_apply(&addr, &resource.location)]);
        }
        let opening = session.open(provider, schema, &addr, &config, &resource.location).await;
        let (value, warnings) = at_attributes(opening, &resource.body)?;
        let value = super::postconditions_hold(resource, &inst_ctx, value)?;
        opened.warnings.extend(warnings);
        opened.values.push((addr, value));
    }
    Ok(opened)
}

/// An open's answer with each diagnostic about an attribute (from the
/// provider's `validate` or `open`) at the place in `body`, the ephemeral
/// block's, where that attribute is written, as Terraform reports it;
/// those about the whole block, or about what is not written there, stay
/// at the block.
pub fn at_attributes(
    opening: Result<OpenAnswer, Vec<Diagnostic>>,
    body: &crate::config::Body,
) -> Result<OpenAnswer, Vec<Diagnostic>> {
    let locate = |diags| super::at_attributes_in(body, diags);
    match opening {
        Ok((value, warnings)) => Ok((value, locate(warnings))),
        Err(errors) => Err(locate(errors)),
    }
}

/// The error of an ephemeral resource whose configuration is still not
/// known when apply opens it (a provider's bug: what it reads is applied).
fn not_known_at_apply(addr: &InstanceAddr, location: &Location) -> Diagnostic {
    Diagnostic::error("Ephemeral resource configuration not known")
        .with_detail(format!(
            "The configuration of {addr} still has values that are not known after everything it refers to was \
             applied, so cairn cannot open it."
        ))
        .at(location)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ApplyRequest, ApplyResponse, CallFuture, OpenResponse, PlanRequest, PlanResponse};
    use crate::provider::{RenewResponse, ready};
    use crate::schema::{Attribute, Block, ProviderSchema};
    use crate::value::Type;

    /// A provider of one ephemeral type, `fake_lease` (`name`, computed
    /// `token`), that records its calls; a lease named `bad` answers a
    /// result that drops its configuration (a contract violation).
    struct Leases {
        schema: ProviderSchema,
        renew_every_ms: Option<u64>,
        calls: Mutex<Vec<String>>,
    }

    impl Leases {
        fn new(renew_every_ms: Option<u64>) -> Arc<Leases> {
            let block = Block {
                attributes: [
                    ("name".to_string(), Attribute::required(Type::String)),
                    ("token".to_string(), Attribute::computed(Type::String)),
                ]
                .into(),
                ..Default::default()
            };
            let schema = ProviderSchema {
                ephemeral_resources: [("fake_lease".to_string(), Schema { version: 0, block })].into(),
                ..Default::default()
            };
            Arc::new(Leases { schema, renew_every_ms, calls: Mutex::new(Vec::new()) })
        }

        fn record(&self, call: String) {
            self.calls.lock().unwrap().push(call);
        }

        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }

        fn next_renewal(&self) -> Option<u64> {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            self.renew_every_ms.map(|ms| now + ms)
        }
    }

    impl Provider for Leases {
        crate::testing::fake_provider_basics!();

        fn plan_resource(&self, _: PlanRequest) -> CallFuture<'_, PlanResponse> {
            unreachable!("no managed resources")
        }

        fn apply_resource(&self, _: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
            unreachable!("no managed resources")
        }

        fn open_ephemeral<'a>(&'a self, _: &'a str, config: &'a Value) -> CallFuture<'a, OpenResponse> {
            let name = config.get_attr("name").as_str().unwrap_or_default().to_string();
            self.record(format!("open {name}"));
            let result = match name.as_str() {
                "bad" => Value::object([("name", Value::string("other")), ("token", Value::string("t"))]),
                _ => Value::object([("name", Value::string(name.clone())), ("token", Value::string("t"))]),
            };
            let private = name.into_bytes();
            ready(Ok(OpenResponse { result, private, renew_at: self.next_renewal(), ..Default::default() }))
        }

        fn renew_ephemeral<'a>(&'a self, _: &'a str, private: &'a [u8]) -> CallFuture<'a, RenewResponse> {
            self.record(format!("renew {}", String::from_utf8_lossy(private)));
            let renew_at = self.next_renewal();
            ready(Ok(RenewResponse { private: private.to_vec(), renew_at, diagnostics: Vec::new() }))
        }

        fn close_ephemeral<'a>(&'a self, _: &'a str, private: &'a [u8]) -> CallFuture<'a, Vec<Diagnostic>> {
            self.record(format!("close {}", String::from_utf8_lossy(private)));
            ready(Ok(Vec::new()))
        }
    }

    fn lease(name: &str) -> (InstanceAddr, Value) {
        let addr = InstanceAddr {
            resource: crate::addr::ResourceAddr::new(
                crate::addr::ModuleInstance::root(),
                crate::addr::Mode::Ephemeral,
                "fake_lease",
                name,
            ),
            key: None,
        };
        (addr, Value::object([("name", Value::string(name)), ("token", Value::Null)]))
    }

    async fn open(session: &Arc<Session>, leases: &Arc<Leases>, name: &str) -> Result<OpenAnswer, Vec<Diagnostic>> {
        let provider: Arc<dyn Provider> = leases.clone();
        let schema = provider.schema().ephemeral_resources["fake_lease"].clone();
        let (addr, config) = lease(name);
        session.open(&provider, &schema, &addr, &config, &Location::default()).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_object_opened_is_closed_once_the_last_first_and_reported() {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let session = Session::new(Arc::new(move |e| seen.lock().unwrap().push(e)));
        let leases = Leases::new(None);
        let (value, _) = open(&session, &leases, "a").await.unwrap();
        assert_eq!(value.get_attr("token"), &Value::string("t"));
        open(&session, &leases, "b").await.unwrap();
        assert_eq!(session.open_count(), 2);
        assert!(session.close_all().await.is_empty());
        assert_eq!(leases.calls(), ["open a", "open b", "close b", "close a"]);
        assert!(session.close_all().await.is_empty(), "closing again closes nothing");
        assert_eq!(leases.calls().len(), 4);
        let actions: Vec<String> = events
            .lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                Event::EphemeralStart { address, action } => format!("{address} {action}"),
                Event::EphemeralFinish { address, action, .. } => format!("{address} {action} done"),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(actions[0], "ephemeral.fake_lease.a open");
        assert_eq!(actions[1], "ephemeral.fake_lease.a open done");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_answer_is_an_error_and_its_object_is_still_closed() {
        let session = Session::silent();
        let leases = Leases::new(None);
        let errors = open(&session, &leases, "bad").await.unwrap_err();
        assert!(errors[0].to_string().contains("invalid ephemeral resource result"), "{errors:?}");
        session.close_all().await;
        assert_eq!(leases.calls(), ["open bad", "close bad"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_object_is_renewed_when_its_renew_at_passes_until_it_is_closed() {
        let session = Session::silent();
        let leases = Leases::new(Some(0));
        open(&session, &leases, "r").await.unwrap();
        // Renewed as soon as asked (renew-at now): wait for the first one.
        while !leases.calls().iter().any(|c| c == "renew r") {
            tokio::task::yield_now().await;
        }
        session.close_all().await;
        let calls = leases.calls();
        assert_eq!(calls.first().map(String::as_str), Some("open r"));
        assert_eq!(calls.last().map(String::as_str), Some("close r"));
        let after_close = calls.len();
        tokio::task::yield_now().await;
        assert_eq!(leases.calls().len(), after_close, "no renewal after the close");
    }
}
