//! One provider instance: a wasmtime store (WASI context, resource limits,
//! log sink) with the instantiated component, and the one way to call into
//! it — with a deadline, turning every failure into a [`CallError`] a user
//! can read.
//!
//! Calls are asynchronous: a provider waiting on a timer or on HTTP is a
//! pending future, not a blocked thread, and a provider computing yields to
//! the executor at every epoch tick, so a few threads carry many calls.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{
    Engine, ResourceLimiter, Store, StoreContextMut, StoreLimits, StoreLimitsBuilder, Trap, UpdateDeadline,
};
use wasmtime_wasi::clocks::WasiClocksCtxView;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::TcpSocket;
use wasmtime_wasi::p2::bindings::filesystem::types as wasi_fs;
use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode as SocketErrorCode, IpAddressFamily};
use wasmtime_wasi::p2::bindings::sockets::tcp_create_socket::Host as _;
use wasmtime_wasi::sockets::WasiSocketsCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::answer::AnswerSize;
use super::bindings::cairn::provider::types as wit;
use super::bindings::exports::cairn::provider::provider::Guest;
use super::bindings::{ProviderWorld, ProviderWorldPre, cairn};
use super::clock;
use super::denials::{Denials, Denied, Diagnosed};
use super::engine::EPOCH_TICK;
use super::files::FileGrants;
use super::fs_watch::{self, FsWatch};
use super::http::HttpPolicy;
use super::output::{GuestOutput, MAX_LINE};
use super::sandbox::Sandbox;
use super::sockets::{self, SocketPolicy, SocketsView};
use super::wire;
use crate::diag::Diagnostic;
use crate::provider::CallError;

/// How many tables and memories one component may create. A Rust component
/// has a handful; interpreters (Python, JavaScript) a few dozen. (Core
/// instances and table elements are budgets of the sandbox.)
const MAX_TABLES: usize = 64;
const MAX_MEMORIES: usize = 16;

/// What a provider's store holds.
pub(crate) struct StoreState {
    provider: Arc<str>,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    http_policy: HttpPolicy,
    table: ResourceTable,
    limits: Limits,
    output: GuestOutput,
    /// When the call in progress must end (see `clock`).
    call_deadline: Option<Instant>,
    /// Whether the clock shortened a wait to end at the deadline in this
    /// call: if the call then ends past its deadline, that wait is why.
    sleep_cut_short: bool,
    /// The files, directories and sockets the provider opened and may
    /// still hold.
    files: FileBudget,
    /// The `connect` grants, and what the provider's sockets were refused.
    sockets: SocketPolicy,
    /// What the sandbox refused the call in progress.
    denials: Denials,
    /// What the `files` import may change: the sandbox's directory grants.
    file_grants: FileGrants,
}

/// The files and directories an instance opened (`open-at`) and the TCP
/// sockets it created, counted together against the sandbox's
/// `max_descriptors`: each is a descriptor of the cairn process, whose
/// limit cairn and every provider share. (A socket's streams are children
/// of the socket in the table: the socket lives as long as they do.)
struct FileBudget {
    /// The table handles of descriptors opened; some may be closed since.
    opened: HashSet<u32>,
    /// The table handles of sockets created; some may be closed since.
    sockets: HashSet<u32>,
    limit: usize,
    /// Set when an open was refused for the limit: what it counted
    /// (`open files`, or `open files and sockets` once sockets were in it).
    hit: Option<&'static str>,
}

impl FileBudget {
    /// How many opened descriptors and sockets are still open (forgetting
    /// the others). A handle reused since for something else is no longer
    /// counted; one reused for a granted directory's handle still is, which
    /// errs on the side of the limit.
    fn held(&mut self, table: &mut ResourceTable) -> usize {
        self.held_files(table) + self.held_sockets(table)
    }

    /// How many opened files and directories are still open.
    fn held_files(&mut self, table: &mut ResourceTable) -> usize {
        self.opened.retain(|&rep| table.get_any_mut(rep).is_ok_and(|entry| entry.is::<Descriptor>()));
        self.opened.len()
    }

    /// How many created sockets are still open.
    fn held_sockets(&mut self, table: &mut ResourceTable) -> usize {
        self.sockets.retain(|&rep| table.get_any_mut(rep).is_ok_and(|entry| entry.is::<TcpSocket>()));
        self.sockets.len()
    }

    /// Whether one more file (or socket, `socket`) would be over the limit;
    /// if so, records what the limit was hit with.
    fn refuses_one_more(&mut self, table: &mut ResourceTable, socket: bool) -> bool {
        if self.held(table) < self.limit {
            return false;
        }
        let sockets = socket || !self.sockets.is_empty();
        self.hit = Some(if sockets { "open files and sockets" } else { "open files" });
        true
    }
}

impl StoreState {
    /// What the deadline-aware WASI clock works with.
    fn clock_view(&mut self) -> clock::DeadlineClockView<'_> {
        clock::DeadlineClockView {
            clocks: WasiClocksCtxView { ctx: self.wasi.clocks(), table: &mut self.table },
            deadline: self.call_deadline,
            cut_short: &mut self.sleep_cut_short,
        }
    }

    /// What the sandbox refused the call that just ended, HTTP and
    /// sockets included.
    fn take_denials(&mut self) -> Denied {
        for origin in self.http_policy.refused.drain(..) {
            self.denials.http_refused(&origin);
        }
        for refused in self.sockets.take_refused() {
            self.denials.socket_refused(&refused);
        }
        self.denials.take()
    }

    /// What the socket functions of `sockets` work with.
    fn sockets_view(&mut self) -> SocketsView<'_> {
        SocketsView { table: &mut self.table, policy: &self.sockets }
    }

    /// What the watched filesystem calls work with (`fs_watch`).
    fn fs_watch(&mut self) -> FsWatch<'_> {
        let view = WasiFilesystemCtxView { ctx: self.wasi.filesystem(), table: &mut self.table };
        FsWatch { fs: view, denials: &mut self.denials }
    }

    /// Whether the call in progress ran out of time: the epoch deadline
    /// trapped it (`trap`), or it waited past its deadline.
    fn timed_out(&self, trap: Option<&Trap>) -> bool {
        matches!(trap, Some(Trap::Interrupt)) || self.waited_past_deadline()
    }

    /// Whether a wait was shortened to end at the deadline and the call is
    /// now past it. A long timer the provider created but never waited out
    /// (the loser of a `poll` on two timers) is not a timeout.
    fn waited_past_deadline(&self) -> bool {
        self.sleep_cut_short && self.call_deadline.is_some_and(|deadline| Instant::now() >= deadline)
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for StoreState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.http_policy }
    }
}

/// The host's `log` import: lines become `tracing` events.
impl cairn::provider::log::Host for StoreState {
    fn log(&mut self, level: cairn::provider::log::Level, mut message: String) {
        use cairn::provider::log::Level;
        if !self.output.admit() {
            return;
        }
        if message.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push_str(&format!(" … (line cut at {MAX_LINE} bytes)"));
        }
        let provider = &*self.provider;
        // tracing needs the level as a constant at each call site.
        match level {
            Level::Trace => tracing::trace!(target: "cairn::provider", provider = %provider, "{message}"),
            Level::Debug => tracing::debug!(target: "cairn::provider", provider = %provider, "{message}"),
            Level::Info => tracing::info!(target: "cairn::provider", provider = %provider, "{message}"),
            Level::Warn => tracing::warn!(target: "cairn::provider", provider = %provider, "{message}"),
            Level::Error => tracing::error!(target: "cairn::provider", provider = %provider, "{message}"),
        }
    }
}

/// The host's `files` import: permission changes inside read-write grants
/// (see `files`). A chmod is one quick system call, made in place like the
/// `log` import's write.
impl cairn::provider::files::Host for StoreState {
    fn set_permissions(&mut self, path: String, mode: u32, apply_umask: bool) -> Result<(), String> {
        self.file_grants.set_permissions(&path, mode, apply_umask)
    }
}

/// The `types` interface has no functions; bindgen still wants a host.
impl cairn::provider::types::Host for StoreState {}

/// wasmtime's store limits, plus a record of whether a memory hit the cap,
/// so that a trap after a failed allocation reads "exceeded its memory limit".
struct Limits {
    inner: StoreLimits,
    memory_limit: u64,
    hit_memory_limit: bool,
}

impl ResourceLimiter for Limits {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        if !allowed {
            self.hit_memory_limit = true;
        }
        Ok(allowed)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// The linker every provider is instantiated with: WASI p2 and wasi:http
/// (which only reach what the sandbox grants; the clock's sleeps end at the
/// call deadline) and the host's `log` and `files`. Blocking WASI calls are
/// asynchronous host functions: they wait without holding a thread.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<StoreState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    clock::shadow_monotonic_clock(&mut linker, StoreState::clock_view)?;
    fs_watch::watch_filesystem(&mut linker, StoreState::fs_watch)?;
    shadow_open_at(&mut linker)?;
    sockets::shadow_sockets(&mut linker, StoreState::sockets_view)?;
    shadow_create_tcp_socket(&mut linker)?;
    ProviderWorld::add_to_linker::<StoreState, HasSelf<StoreState>>(&mut linker, |state| state)?;
    Ok(linker)
}

/// How wasmtime-wasi names the filesystem interface it links (the version
/// of its WIT); components importing any 0.2.x version are linked to it.
pub(crate) const WASI_FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces wasmtime-wasi's `descriptor.open-at` by one that counts the
/// descriptors the instance holds and refuses one more than the sandbox's
/// `max_descriptors`, trapping with a message that says so. It is the only
/// WASI call that opens a file or directory of the host (reading a
/// directory reads it whole; granted directories are opened by the host).
/// What the sandbox refuses it is recorded (`fs_watch`).
fn shadow_open_at(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    type Args = (Resource<Descriptor>, wasi_fs::PathFlags, String, wasi_fs::OpenFlags, wasi_fs::DescriptorFlags);
    type Opened = Result<Resource<Descriptor>, wasi_fs::ErrorCode>;
    linker.allow_shadowing(true);
    linker.instance(WASI_FILESYSTEM_TYPES)?.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, StoreState>, (dir, path_flags, path, open_flags, flags): Args| {
            Box::new(async move {
                let StoreState { wasi, table, files, denials, .. } = store.data_mut();
                if files.refuses_one_more(table, false) {
                    return Err(wasmtime::Error::msg(format!("the limit of {} open files was reached", files.limit)));
                }
                let mut watch = FsWatch { fs: WasiFilesystemCtxView { ctx: wasi.filesystem(), table }, denials };
                let opened: Opened = watch.open_at(dir, path_flags, path, open_flags, flags).await?;
                if let Ok(descriptor) = &opened {
                    files.opened.insert(descriptor.rep());
                }
                Ok((opened,))
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Replaces wasmtime-wasi's `create-tcp-socket` by one that counts the
/// sockets the instance holds with its files, and refuses one more than the
/// sandbox's `max_descriptors`, trapping with a message that says so: every
/// socket is a descriptor of the cairn process, and a provider that opens
/// connections without end would take them all. (Where a socket may
/// connect is `sockets`' business.)
fn shadow_create_tcp_socket(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    type Created = Result<Resource<TcpSocket>, SocketErrorCode>;
    linker.allow_shadowing(true);
    linker.instance(sockets::WASI_SOCKETS_TCP_CREATE)?.func_wrap(
        "create-tcp-socket",
        |mut store: StoreContextMut<'_, StoreState>, (family,): (IpAddressFamily,)| {
            let StoreState { wasi, table, files, .. } = store.data_mut();
            if files.refuses_one_more(table, true) {
                let message = format!("the limit of {} open files and sockets was reached", files.limit);
                return Err(wasmtime::Error::msg(message));
            }
            let mut view = WasiSocketsCtxView { ctx: wasi.sockets(), table };
            let created: Created = match view.create_tcp_socket(family) {
                Ok(socket) => Ok(socket),
                Err(e) => Err(e.downcast()?),
            };
            if let Ok(socket) = &created {
                files.sockets.insert(socket.rep());
            }
            Ok((created,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// One export call of an instance: given the exports and the store, the
/// future of the call. (A boxed future, so that calls stay `Send`.)
pub(crate) type ExportCall<R> = Box<
    dyn for<'a> FnOnce(
            &'a Guest,
            &'a mut Store<StoreState>,
        ) -> Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>
        + Send,
>;

/// A call on the instance itself, for exports outside the `provider`
/// interface (the optional `state-moves`, see `state_moves`): given the
/// instance, the future of the call.
pub(crate) type InstanceCall<R> =
    Box<dyn for<'a> FnOnce(&'a mut Instance) -> Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>> + Send>;

/// The call `f` of the `provider` interface, as a call on the instance.
pub(crate) fn on_provider<R: 'static>(f: ExportCall<R>) -> InstanceCall<R> {
    Box::new(move |i| f(i.world.cairn_provider_provider(), &mut i.store))
}

/// An instantiated provider, ready for calls.
pub(crate) struct Instance {
    pub(super) store: Store<StoreState>,
    world: ProviderWorld,
    /// The instance itself, where optional exports are looked up.
    pub(super) instance: wasmtime::component::Instance,
    timeout: Duration,
    max_answer_bytes: u64,
    max_handles: usize,
}

impl Instance {
    /// A fresh instance of `pre` in `sandbox`.
    pub(crate) async fn new(
        pre: &ProviderWorldPre<StoreState>,
        provider: &Arc<str>,
        sandbox: &Sandbox,
    ) -> Result<Instance, CallError> {
        let error = |message: String| CallError::new(&**provider, "instantiate", message);
        let output = GuestOutput::new(provider.clone(), sandbox.max_log_lines);
        let sockets = SocketPolicy::new(sandbox);
        let wasi = super::wasi::context(sandbox, &output, &sockets)
            .map_err(|e| error(format!("could not be started: {e}")))?;
        let memory_limit = usize::try_from(sandbox.memory_limit).unwrap_or(usize::MAX);
        let limits = StoreLimitsBuilder::new()
            .memory_size(memory_limit)
            .instances(sandbox.max_instances)
            .tables(MAX_TABLES)
            .memories(MAX_MEMORIES)
            .table_elements(sandbox.max_table_elements)
            .build();
        let mut table = ResourceTable::new();
        table.set_max_capacity(sandbox.max_handles);
        // Until the first call, the deadline is instantiation's.
        let deadline = clock::deadline_after(sandbox.call_timeout);
        let state = StoreState {
            provider: provider.clone(),
            wasi,
            http: WasiHttpCtx::new(),
            http_policy: HttpPolicy::new(provider.clone(), sandbox.http.clone(), deadline),
            table,
            limits: Limits { inner: limits, memory_limit: sandbox.memory_limit, hit_memory_limit: false },
            output,
            call_deadline: deadline,
            sleep_cut_short: false,
            files: FileBudget {
                opened: HashSet::new(),
                sockets: HashSet::new(),
                limit: sandbox.max_descriptors,
                hit: None,
            },
            sockets,
            denials: Denials::new(sandbox),
            file_grants: FileGrants::new(provider.clone(), sandbox),
        };
        let mut store = Store::new(pre.engine(), state);
        store.limiter(|state| &mut state.limits);
        store.set_max_component_handles(sandbox.max_handles);
        // wasmtime bounds what it copies out of the instance in one go (an
        // answer, or the arguments of a host call) by its "hostcall fuel":
        // strings by their bytes, lists by their elements' host size. Even a
        // crafted answer whose strings all alias the same guest bytes then
        // stops there. Never less than wasmtime's default, so that host calls
        // work as they would anywhere; an answer over `max_answer_bytes` but
        // under this is copied, measured and rejected by `call`.
        let fuel = usize::try_from(sandbox.max_answer_bytes).unwrap_or(usize::MAX).max(store.hostcall_fuel());
        store.set_hostcall_fuel(fuel);
        // At every epoch tick the provider yields to the executor, so that a
        // busy provider shares its thread; past the call's deadline it traps.
        store.epoch_deadline_callback(|store| {
            let past = store.data().call_deadline.is_some_and(|d| Instant::now() >= d);
            Ok(if past { UpdateDeadline::Interrupt } else { UpdateDeadline::Yield(1) })
        });
        // Start functions run during instantiation: they get a deadline too.
        store.set_epoch_deadline(1);
        // Instantiated by hand rather than by `pre.instantiate_async`, to
        // keep the instance: optional exports are looked up in it.
        let instantiated = match pre.instance_pre().instantiate_async(&mut store).await {
            Ok(instance) => ProviderWorld::new(&mut store, &instance).map(|world| (world, instance)),
            Err(e) => Err(e),
        };
        match instantiated {
            Ok((world, instance)) => Ok(Instance {
                store,
                world,
                instance,
                timeout: sandbox.call_timeout,
                max_answer_bytes: sandbox.max_answer_bytes,
                max_handles: sandbox.max_handles,
            }),
            Err(e) => {
                Err(failure(provider, "instantiate", &e, store.data(), sandbox.call_timeout, fuel, sandbox.max_handles))
            }
        }
    }

    /// Makes the export call `f` with the call deadline set, and checks the
    /// size of the answer. On error the instance must be thrown away: its
    /// state is unknown.
    pub(crate) async fn call<R: AnswerSize + Diagnosed + 'static>(
        &mut self,
        operation: &'static str,
        f: ExportCall<R>,
    ) -> Result<R, CallError> {
        self.call_instance(operation, on_provider(f)).await
    }

    /// [`Instance::call`] for a call that reaches the instance's exports
    /// itself (an optional interface's).
    pub(crate) async fn call_instance<R: AnswerSize + Diagnosed + 'static>(
        &mut self,
        operation: &'static str,
        f: InstanceCall<R>,
    ) -> Result<R, CallError> {
        let state = self.store.data_mut();
        state.output.start_call();
        state.denials.start_call();
        state.http_policy.refused.clear();
        state.limits.hit_memory_limit = false;
        state.sleep_cut_short = false;
        state.files.hit = None;
        state.call_deadline = clock::deadline_after(self.timeout);
        state.http_policy.deadline = state.call_deadline;
        self.store.set_epoch_deadline(1);
        // The epoch deadline stops WebAssembly code, and the clock and HTTP
        // cut their own waits; this stops everything else a provider can
        // wait on in the host (a stream that never becomes ready…), a few
        // ticks later so that those give the reason first.
        let bound = self.timeout + 3 * EPOCH_TICK;
        let call = f(self);
        let result = tokio::time::timeout(bound, call).await;
        let fuel = self.store.hostcall_fuel();
        self.store.data().output.end_call();
        let mut outcome = self.outcome(operation, result, fuel);
        // What the sandbox refused may be why the call failed: the user
        // is told beside the provider's own words.
        let denied = self.store.data_mut().take_denials();
        match &mut outcome {
            Ok(answer) => denied.add_to_answer(answer),
            Err(error) => denied.add_to_error(error),
        }
        outcome
    }

    /// What the `result` of a call (within its time bound or not) means for
    /// the caller.
    fn outcome<R: AnswerSize>(
        &self,
        operation: &'static str,
        result: Result<wasmtime::Result<R>, tokio::time::error::Elapsed>,
        fuel: usize,
    ) -> Result<R, CallError> {
        let state = self.store.data();
        let Ok(result) = result else {
            return Err(CallError::new(&*state.provider, operation, time_limit(self.timeout)));
        };
        match result {
            // An answer built on a sleep the provider did not get is no answer.
            Ok(_) if state.waited_past_deadline() => {
                Err(CallError::new(&*state.provider, operation, time_limit(self.timeout)))
            }
            Ok(answer) => {
                let size = answer.answer_size() as u64;
                if size > self.max_answer_bytes {
                    let message = answer_too_large(size, self.max_answer_bytes);
                    return Err(CallError::new(&*state.provider, operation, message));
                }
                Ok(answer)
            }
            Err(e) => {
                tracing::debug!(provider = %state.provider, operation, "provider call failed: {e:?}");
                Err(failure(&state.provider, operation, &e, state, self.timeout, fuel, self.max_handles))
            }
        }
    }

    /// How many files and directories the provider holds open: an instance
    /// that still holds some after its call is not kept for the next one.
    /// (Its connections are not counted here: a provider may keep one open
    /// from call to call, as a database client keeps its session.)
    pub(crate) fn held_descriptors(&mut self) -> usize {
        let StoreState { table, files, .. } = self.store.data_mut();
        files.held_files(table)
    }

    /// How many TCP sockets the provider holds open: an instance may keep a
    /// connection for its next call, but not half its descriptor budget.
    pub(crate) fn held_sockets(&mut self) -> usize {
        let StoreState { table, files, .. } = self.store.data_mut();
        files.held_sockets(table)
    }

    /// How many handles the host's table holds for the provider (files,
    /// streams, timers, requests…).
    pub(crate) fn held_handles(&mut self) -> usize {
        self.store.data_mut().table.iter_mut().count()
    }

    /// Calls `configure` with the `provider` block `config`; returns what the
    /// provider said about it.
    pub(crate) async fn configure(&mut self, config: wit::Value) -> Result<Vec<Diagnostic>, CallError> {
        let call: ExportCall<_> = Box::new(move |g, s| Box::pin(async move { g.call_configure(s, &config).await }));
        let answer = self.call("configure", call).await?;
        Ok(wire::diagnostics_from_wire(&answer))
    }
}

/// What a provider is told when its answer is over `max_answer_size`.
pub(crate) fn answer_too_large(size: u64, limit: u64) -> String {
    format!("returned an answer of {}, more than the limit of {}", human_size(size), human_bytes(limit))
}

/// What a provider is told when its answer, decoded, would take more than
/// `max_answer_size` (a node shared on the wire counts for every reference
/// to it); decoding stopped at the limit, so how far over is not known.
pub(crate) fn answer_decodes_too_large(limit: u64) -> String {
    format!("returned an answer that decodes to more than the limit of {}", human_bytes(limit))
}

fn time_limit(timeout: Duration) -> String {
    format!("exceeded its time limit of {}", human_duration(timeout))
}

/// How wasmtime says that an instance handed the host more data at once than
/// the store's hostcall fuel allows.
const TOO_MUCH_DATA: &str = "too much data is being copied between the host and the guest";

/// How wasmtime says that an instance holds more handles than the store's
/// limit (`max_handles`), and how wasmtime-wasi's table says it is full.
const TOO_MANY_HANDLES: [&str; 2] = ["store handle limit exceeded", "resource table has no free keys"];

/// What went wrong, in words a user understands, with the provider's last
/// lines of standard error (a panic message, an allocator's complaint) as
/// the detail.
fn failure(
    provider: &str,
    operation: &'static str,
    error: &wasmtime::Error,
    state: &StoreState,
    timeout: Duration,
    fuel: usize,
    max_handles: usize,
) -> CallError {
    let trap = error.downcast_ref::<Trap>();
    let stderr = state.output.recent_stderr();
    let chain = format!("{error:#}");
    let message = if state.timed_out(trap) {
        time_limit(timeout)
    } else if state.limits.hit_memory_limit {
        format!("exceeded its memory limit of {}", human_bytes(state.limits.memory_limit))
    } else if let Some(what) = state.files.hit {
        format!("exceeded its limit of {} {what}", state.files.limit)
    } else if TOO_MANY_HANDLES.iter().any(|m| chain.contains(m)) {
        format!("exceeded its limit of {max_handles} handles")
    } else if chain.contains(TOO_MUCH_DATA) {
        format!(
            "handed the host more than {} at once (an answer, or a host call's arguments)",
            human_bytes(fuel as u64)
        )
    } else if let Some(panic) = panic_message(&stderr) {
        format!("panicked: {panic}")
    } else if let Some(Trap::StackOverflow) = trap {
        "overflowed its stack (unbounded recursion?)".to_string()
    } else if let Some(trap) = trap {
        format!("crashed: {trap}")
    } else {
        // One line: the rest of the chain is a WebAssembly backtrace, for
        // the log (see `call`), not for the user.
        format!("crashed: {}", chain.lines().next().unwrap_or_default())
    };
    let mut detail = String::new();
    if !stderr.is_empty() {
        detail.push_str("provider stderr:");
        for line in stderr.iter().filter(|l| !l.trim().is_empty()) {
            detail.push_str("\n  ");
            detail.push_str(line);
        }
    }
    CallError { provider: provider.to_string(), operation, message, detail }
}

/// The message of a Rust panic in the provider's standard error: the line
/// after `thread '…' panicked at src/lib.rs:1:2:`.
fn panic_message(stderr: &[String]) -> Option<String> {
    let at = stderr.iter().position(|line| line.contains(" panicked at "))?;
    let message = stderr.get(at + 1).map(|l| l.trim().to_string()).unwrap_or_default();
    Some(if message.is_empty() { "(no message)".to_string() } else { message })
}

/// `60s`, `1.5s`, `250ms`.
fn human_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// An answer's size: `100.0 MiB`, `12.5 KiB`, `300 bytes`.
fn human_size(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size {
            return format!("{:.1} {unit}", n as f64 / size as f64);
        }
    }
    format!("{n} bytes")
}

/// `512 MiB`, `1 GiB`, `1000 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_well() {
        assert_eq!(human_bytes(512 << 20), "512 MiB");
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(3 << 10), "3 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_duration(Duration::from_secs(60)), "60s");
        assert_eq!(human_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(human_size(100 << 20), "100.0 MiB");
        assert_eq!(human_size(1536), "1.5 KiB");
    }

    #[test]
    fn panic_messages_are_found_in_stderr() {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let two_lines = lines(&["noise", "thread '<unnamed>' panicked at src/lib.rs:9:5:", "boom here", "note: x"]);
        assert_eq!(panic_message(&two_lines).as_deref(), Some("boom here"));
        let last = lines(&["thread 'main' panicked at src/lib.rs:9:5:"]);
        assert_eq!(panic_message(&last).as_deref(), Some("(no message)"));
        assert_eq!(panic_message(&lines(&["nothing"])), None);
    }
}
