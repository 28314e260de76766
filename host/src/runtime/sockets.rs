//! `wasi:sockets` under the sandbox's `connect` grants: outgoing TCP to the
//! granted targets, at the addresses the host pinned them to, and nothing
//! else.
//!
//! What a provider may do, and where that is decided:
//! - **connect** over TCP to a granted address and port: wasmtime-wasi asks
//!   [`SocketPolicy::check`] before every connect (and every bind, listen,
//!   accept and UDP use), and only a pinned address of a grant passes;
//! - **look up** a granted name: this module's own `ip-name-lookup`
//!   ([`shadow_sockets`]) answers with the addresses the host resolved
//!   once when the run started (`Sandbox::pin_connect_targets`), so that
//!   the DNS cannot send the provider elsewhere later; any other name is
//!   refused, and an IP address written as a name is itself;
//! - never **bind** (an explicit `start-bind` is refused here; the implicit
//!   bind of a connect to the wildcard address and port 0 passes the check),
//!   **listen** (`start-listen` is refused here too) or **accept**, and no
//!   **UDP** socket is ever created.
//!
//! Every refusal is kept in [`SocketPolicy`] and told with the call's error
//! (`denials`). How many sockets an instance holds is counted with its
//! files against `max_descriptors` (`instance`), and reads, writes and
//! connects wait inside the call's time limit like every host wait
//! (`instance::Instance::call`).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable, ResourceType};
use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress};
use wasmtime_wasi::p2::{DynPollable, Network, Pollable, TcpSocket, UdpSocket};
use wasmtime_wasi::sockets::SocketAddrUse;

use super::sandbox::{ConnectGrant, Sandbox};

/// How wasmtime-wasi names the socket interfaces it links (the version of
/// its WIT); components importing any 0.2.x version are linked to them.
pub(crate) const WASI_SOCKETS_TCP: &str = "wasi:sockets/tcp@0.2.12";
pub(crate) const WASI_SOCKETS_TCP_CREATE: &str = "wasi:sockets/tcp-create-socket@0.2.12";
const WASI_SOCKETS_UDP_CREATE: &str = "wasi:sockets/udp-create-socket@0.2.12";
const WASI_SOCKETS_LOOKUP: &str = "wasi:sockets/ip-name-lookup@0.2.12";

/// What the sandbox refused a provider's sockets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A TCP connection to an address no grant pins.
    Connect(SocketAddr),
    /// A bind to a local address.
    Bind(SocketAddr),
    /// Listening for connections, or accepting one.
    Listen,
    /// A UDP socket (of the address family given: `IPv4`, `IPv6`).
    Udp(&'static str),
    /// A name lookup of a name no grant names (or one that did not resolve).
    Lookup(String),
}

/// The `connect` grants of one instance, and what its sockets were refused
/// in the call in progress. Cloned into wasmtime-wasi's address check, so
/// the record is shared.
#[derive(Debug, Clone)]
pub(crate) struct SocketPolicy {
    grants: Arc<[ConnectGrant]>,
    refused: Arc<Mutex<Vec<Refused>>>,
}

impl SocketPolicy {
    /// The policy of the grants of `sandbox`, nothing refused yet.
    pub(crate) fn new(sandbox: &Sandbox) -> SocketPolicy {
        SocketPolicy { grants: sandbox.connect.clone().into(), refused: Arc::default() }
    }

    /// Whether `addr` may be used for `usage`: connecting to a pinned
    /// address of a grant, or the implicit bind of such a connect (to the
    /// wildcard address and port 0; an explicit bind is refused before it
    /// gets here). A refusal is recorded.
    pub(crate) fn allows(&self, addr: SocketAddr, usage: SocketAddrUse) -> bool {
        let refused = match usage {
            SocketAddrUse::TcpConnect if self.grants.iter().any(|g| g.allows(addr)) => return true,
            SocketAddrUse::TcpBind if addr.ip().is_unspecified() && addr.port() == 0 => return true,
            SocketAddrUse::TcpConnect => Refused::Connect(addr),
            SocketAddrUse::TcpBind => Refused::Bind(addr),
            SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => Refused::Listen,
            SocketAddrUse::UdpBind | SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => {
                Refused::Udp(if addr.is_ipv4() { "IPv4" } else { "IPv6" })
            }
        };
        self.refuse(refused);
        false
    }

    /// wasmtime-wasi's address check, asking [`SocketPolicy::allows`].
    pub(crate) fn check(
        &self,
    ) -> impl Fn(SocketAddr, SocketAddrUse) -> Pin<Box<dyn Future<Output = bool> + Send + Sync>> + Send + Sync + 'static
    {
        let policy = self.clone();
        move |addr, usage| {
            let allowed = policy.allows(addr, usage);
            Box::pin(async move { allowed })
        }
    }

    /// The addresses of `name` a provider may reach: an IP address is
    /// itself; a granted name, what it is pinned to (an error when it did
    /// not resolve); any other name is refused, and recorded.
    pub(crate) fn lookup(&self, name: &str) -> Result<Vec<IpAddr>, ErrorCode> {
        let literal = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
        if let Ok(ip) = literal.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        let mut addresses: Vec<IpAddr> = Vec::new();
        let granted: Vec<&ConnectGrant> = self.grants.iter().filter(|g| g.names(name)).collect();
        for ip in granted.iter().flat_map(|g| g.addresses()) {
            if !addresses.contains(ip) {
                addresses.push(*ip);
            }
        }
        if granted.is_empty() {
            self.refuse(Refused::Lookup(name.to_string()));
            return Err(ErrorCode::AccessDenied);
        }
        if addresses.is_empty() {
            // Granted, but it did not resolve when the run started.
            self.refuse(Refused::Lookup(name.to_string()));
            return Err(ErrorCode::NameUnresolvable);
        }
        Ok(addresses)
    }

    /// Records `refused`.
    pub(crate) fn refuse(&self, refused: Refused) {
        self.refused.lock().unwrap_or_else(PoisonError::into_inner).push(refused);
    }

    /// What was refused since the last time, in order; the record starts
    /// afresh.
    pub(crate) fn take_refused(&self) -> Vec<Refused> {
        std::mem::take(&mut *self.refused.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The answer to a name lookup: the addresses, handed out one at a time.
pub(crate) struct PinnedLookup {
    addresses: std::vec::IntoIter<IpAddr>,
}

/// Always ready: the addresses are known before the lookup is asked.
#[wasmtime_wasi::async_trait]
impl Pollable for PinnedLookup {
    async fn ready(&mut self) {}
}

/// What the socket functions of this module work with.
pub(crate) struct SocketsView<'a> {
    /// The instance's resource table.
    pub table: &'a mut ResourceTable,
    /// The instance's grants and record of refusals.
    pub policy: &'a SocketPolicy,
}

/// Replaces, in `linker` (which must already have wasmtime-wasi's
/// interfaces), the socket functions the sandbox decides itself: the whole
/// of `ip-name-lookup` (wasmtime-wasi has no hook to answer a lookup), an
/// explicit `start-bind` and `start-listen` (refused, whatever state the
/// socket is in) and `create-udp-socket` (refused).
/// `view` finds the instance's state.
pub(crate) fn shadow_sockets<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> SocketsView<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut lookup = linker.instance(WASI_SOCKETS_LOOKUP)?;
    lookup.resource("resolve-address-stream", ResourceType::host::<PinnedLookup>(), move |mut store, rep| {
        view(store.data_mut()).table.delete(Resource::<PinnedLookup>::new_own(rep))?;
        Ok(())
    })?;
    lookup.func_wrap(
        "resolve-addresses",
        move |mut store: StoreContextMut<'_, T>, (network, name): (Resource<Network>, String)| {
            let SocketsView { table, policy } = view(store.data_mut());
            // The network handle is the capability to look up; it must be one.
            table.get(&network)?;
            let answer = match policy.lookup(&name) {
                Ok(addresses) => Ok(table.push(PinnedLookup { addresses: addresses.into_iter() })?),
                Err(code) => Err(code),
            };
            Ok((answer,))
        },
    )?;
    lookup.func_wrap(
        "[method]resolve-address-stream.resolve-next-address",
        move |mut store: StoreContextMut<'_, T>, (stream,): (Resource<PinnedLookup>,)| {
            let next = view(store.data_mut()).table.get_mut(&stream)?.addresses.next().map(IpAddress::from);
            Ok((Ok::<_, ErrorCode>(next),))
        },
    )?;
    lookup.func_wrap(
        "[method]resolve-address-stream.subscribe",
        move |mut store: StoreContextMut<'_, T>, (stream,): (Resource<PinnedLookup>,)| {
            let pollable: Resource<DynPollable> = wasmtime_wasi::p2::subscribe(view(store.data_mut()).table, stream)?;
            Ok((pollable,))
        },
    )?;
    linker.instance(WASI_SOCKETS_TCP)?.func_wrap(
        "[method]tcp-socket.start-bind",
        move |mut store: StoreContextMut<'_, T>,
              (socket, _network, local): (Resource<TcpSocket>, Resource<Network>, IpSocketAddress)| {
            let SocketsView { table, policy } = view(store.data_mut());
            table.get(&socket)?;
            policy.refuse(Refused::Bind(SocketAddr::from(local)));
            Ok((Err::<(), _>(ErrorCode::AccessDenied),))
        },
    )?;
    linker.instance(WASI_SOCKETS_TCP)?.func_wrap(
        "[method]tcp-socket.start-listen",
        move |mut store: StoreContextMut<'_, T>, (socket,): (Resource<TcpSocket>,)| {
            let SocketsView { table, policy } = view(store.data_mut());
            table.get(&socket)?;
            policy.refuse(Refused::Listen);
            Ok((Err::<(), _>(ErrorCode::AccessDenied),))
        },
    )?;
    linker.instance(WASI_SOCKETS_UDP_CREATE)?.func_wrap(
        "create-udp-socket",
        move |mut store: StoreContextMut<'_, T>, (family,): (IpAddressFamily,)| {
            let family = match family {
                IpAddressFamily::Ipv4 => "IPv4",
                IpAddressFamily::Ipv6 => "IPv6",
            };
            view(store.data_mut()).policy.refuse(Refused::Udp(family));
            Ok((Err::<Resource<UdpSocket>, _>(ErrorCode::AccessDenied),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(targets: &[&str]) -> SocketPolicy {
        let mut sandbox = Sandbox::default();
        for target in targets {
            sandbox.grant_connect(target).unwrap();
        }
        SocketPolicy::new(&sandbox)
    }

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_pinned_addresses_of_granted_ports_connect() {
        let mut sandbox = Sandbox::default();
        sandbox.grant_connect("127.0.0.1:5432").unwrap();
        sandbox.grant_connect("db.internal:6432").unwrap();
        sandbox.connect[1].pinned = crate::runtime::sandbox::Pinned::Resolved(vec![IpAddr::from([10, 0, 0, 7])]);
        let policy = SocketPolicy::new(&sandbox);
        assert!(policy.allows(addr("127.0.0.1:5432"), SocketAddrUse::TcpConnect));
        assert!(policy.allows(addr("10.0.0.7:6432"), SocketAddrUse::TcpConnect));
        assert!(policy.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpBind), "a connect's implicit bind");
        assert!(policy.take_refused().is_empty());
        assert!(!policy.allows(addr("127.0.0.1:5433"), SocketAddrUse::TcpConnect));
        assert!(!policy.allows(addr("10.0.0.8:6432"), SocketAddrUse::TcpConnect), "not what the name is pinned to");
        assert!(!policy.allows(addr("127.0.0.1:0"), SocketAddrUse::TcpBind));
        assert!(!policy.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpListen));
        assert!(!policy.allows(addr("127.0.0.1:53"), SocketAddrUse::UdpSend));
        assert_eq!(
            policy.take_refused(),
            [
                Refused::Connect(addr("127.0.0.1:5433")),
                Refused::Connect(addr("10.0.0.8:6432")),
                Refused::Bind(addr("127.0.0.1:0")),
                Refused::Listen,
                Refused::Udp("IPv4"),
            ]
        );
        assert!(policy.take_refused().is_empty(), "taken once");
    }

    #[test]
    fn only_granted_names_are_looked_up() {
        let mut sandbox = Sandbox::default();
        sandbox.grant_connect("db.internal:5432").unwrap();
        sandbox.grant_connect("db.internal:6432").unwrap();
        sandbox.grant_connect("gone.internal:5432").unwrap();
        let pin = |ips: &[[u8; 4]]| {
            crate::runtime::sandbox::Pinned::Resolved(ips.iter().map(|ip| IpAddr::from(*ip)).collect())
        };
        sandbox.connect[0].pinned = pin(&[[10, 0, 0, 7], [10, 0, 0, 8]]);
        sandbox.connect[1].pinned = pin(&[[10, 0, 0, 8], [10, 0, 0, 9]]);
        sandbox.connect[2].pinned = crate::runtime::sandbox::Pinned::Failed("no such host".into());
        let policy = SocketPolicy::new(&sandbox);
        let found = policy.lookup("DB.internal.").unwrap();
        assert_eq!(found, [[10, 0, 0, 7], [10, 0, 0, 8], [10, 0, 0, 9]].map(IpAddr::from));
        assert_eq!(policy.lookup("127.0.0.2").unwrap(), [IpAddr::from([127, 0, 0, 2])], "an address is itself");
        assert_eq!(policy.lookup("[::1]").unwrap(), ["::1".parse::<IpAddr>().unwrap()]);
        assert!(matches!(policy.lookup("evil.example"), Err(ErrorCode::AccessDenied)));
        assert!(matches!(policy.lookup("gone.internal"), Err(ErrorCode::NameUnresolvable)));
        assert_eq!(
            policy.take_refused(),
            [Refused::Lookup("evil.example".into()), Refused::Lookup("gone.internal".into())]
        );
    }

    #[test]
    fn without_a_grant_nothing_connects() {
        let policy = policy(&[]);
        assert!(!policy.allows(addr("127.0.0.1:5432"), SocketAddrUse::TcpConnect));
        assert!(matches!(policy.lookup("localhost"), Err(ErrorCode::AccessDenied)));
        assert_eq!(policy.take_refused().len(), 2);
    }
}
