//! IP network functions (`cidrhost`, `cidrnetmask`, `cidrsubnet`,
//! `cidrsubnets`), on
//! ipnet's address arithmetic, with Terraform's argument rules.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

use crate::value::Value;

use super::{Args, FnError};

/// Argument `i` as a network in CIDR notation (`10.0.0.0/16`).
fn network(args: &Args, i: usize) -> Result<IpNet, FnError> {
    let text = args.string(i)?;
    text.parse::<IpNet>().map_err(|e| FnError::arg(i, format!("invalid CIDR expression {text:?}: {e}")))
}

/// The address `n` places into `net` (negative: from the end), as a number.
fn nth_address(net: &IpNet, n: i128) -> Option<IpAddr> {
    let (base, size) = match net {
        IpNet::V4(v4) => (u128::from(u32::from(v4.network())), 1u128 << (32 - v4.prefix_len())),
        IpNet::V6(v6) => {
            let bits = 128 - u32::from(v6.prefix_len());
            (u128::from(v6.network()), if bits == 128 { u128::MAX } else { 1u128 << bits })
        }
    };
    let offset = if n < 0 { size.checked_sub(n.unsigned_abs())? } else { u128::try_from(n).ok()? };
    if offset >= size {
        return None;
    }
    let address = base + offset;
    Some(match net {
        IpNet::V4(_) => IpAddr::V4(Ipv4Addr::from(u32::try_from(address).ok()?)),
        IpNet::V6(_) => IpAddr::V6(Ipv6Addr::from(address)),
    })
}

/// `cidrhost(prefix, hostnum)`: the address of host `hostnum` in the
/// network (negative numbers count from its end).
pub(super) fn cidrhost(args: &Args) -> Result<Value, FnError> {
    let net = network(args, 0)?;
    let n = args.integer(1)?;
    let address = nth_address(&net, i128::from(n))
        .ok_or_else(|| FnError::arg(1, format!("prefix {net} has no host number {n}")))?;
    Ok(Value::string(address.to_string()))
}

/// `cidrnetmask(prefix)`: the netmask of an IPv4 network, dotted.
pub(super) fn cidrnetmask(args: &Args) -> Result<Value, FnError> {
    match network(args, 0)? {
        IpNet::V4(v4) => Ok(Value::string(v4.netmask().to_string())),
        IpNet::V6(_) => Err(FnError::arg(0, "only IPv4 networks have a netmask")),
    }
}

/// `cidrsubnet(prefix, newbits, netnum)`: subnet `netnum` of the network
/// extended by `newbits` bits.
pub(super) fn cidrsubnet(args: &Args) -> Result<Value, FnError> {
    let net = network(args, 0)?;
    let newbits = args.integer(1)?;
    let netnum = args.integer(2)?;
    let max_prefix = if matches!(net, IpNet::V4(_)) { 32 } else { 128 };
    let prefix = i64::from(net.prefix_len()) + newbits;
    if newbits < 0 || prefix > max_prefix {
        return Err(FnError::arg(1, format!("{newbits} bits extend prefix {} beyond {max_prefix}", net.prefix_len())));
    }
    let subnets = 1i128.checked_shl(u32::try_from(newbits).unwrap_or(u32::MAX)).unwrap_or(i128::MAX);
    if netnum < 0 || i128::from(netnum) >= subnets {
        return Err(FnError::arg(2, format!("prefix extension of {newbits} bits has no subnet number {netnum}")));
    }
    // The subnet starts at netnum times its own size into the network.
    let size_bits = u32::try_from(max_prefix - prefix).unwrap_or(0);
    let first = i128::from(netnum).checked_shl(size_bits).ok_or_else(|| FnError::arg(2, "subnet number too large"))?;
    let start = nth_address(&net, first).ok_or_else(|| FnError::arg(2, format!("no subnet number {netnum}")))?;
    let prefix = u8::try_from(prefix).unwrap_or(0);
    let subnet = IpNet::new(start, prefix).map_err(|e| FnError::call(e.to_string()))?;
    Ok(Value::string(subnet.to_string()))
}

/// `cidrsubnets(prefix, newbits...)`: consecutive subnets of the network,
/// each `newbits` longer than it, each starting at the first address after
/// the previous one that is aligned to its own size.
pub(super) fn cidrsubnets(args: &Args) -> Result<Value, FnError> {
    let net = network(args, 0)?;
    let max_prefix: u32 = if matches!(net, IpNet::V4(_)) { 32 } else { 128 };
    let host_bits = max_prefix - u32::from(net.prefix_len());
    let capacity = if host_bits == 128 { u128::MAX } else { 1u128 << host_bits };
    let mut next: u128 = 0;
    let mut subnets = Vec::new();
    for i in 1..args.values.len() {
        let newbits = args.integer(i)?;
        if newbits < 1 || i64::from(net.prefix_len()) + newbits > i64::from(max_prefix) {
            return Err(FnError::arg(
                i,
                format!(
                    "would extend prefix to {} bits, which is too long for an IPv{} address",
                    i64::from(net.prefix_len()) + newbits,
                    if max_prefix == 32 { 4 } else { 6 }
                ),
            ));
        }
        let size_bits = host_bits - u32::try_from(newbits).unwrap_or(0);
        let size = 1u128 << size_bits;
        let start = next.div_ceil(size) * size;
        if start >= capacity || capacity - start < size {
            return Err(FnError::arg(
                i,
                format!(
                    "not enough remaining address space for a subnet with a prefix of {} bits after {}",
                    max_prefix - size_bits,
                    subnets
                        .last()
                        .map_or_else(|| net.to_string(), |v: &Value| v.as_str().unwrap_or_default().to_string())
                ),
            ));
        }
        let address = nth_address(&net, i128::try_from(start).unwrap_or(i128::MAX))
            .ok_or_else(|| FnError::arg(i, "the subnet is outside the network"))?;
        let subnet = IpNet::new(address, u8::try_from(max_prefix - size_bits).unwrap_or(0))
            .map_err(|e| FnError::call(e.to_string()))?;
        subnets.push(Value::string(subnet.to_string()));
        next = start + size;
    }
    Ok(Value::List(subnets))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use crate::value::Value;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn cidr_functions_agree_with_terraform() {
        // Each figure checked against `terraform console` 1.11.4.
        assert_eq!(value("cidrsubnet(\"172.16.0.0/12\", 4, 2)"), s("172.18.0.0/16"));
        assert_eq!(value("cidrsubnet(\"10.1.2.0/24\", 4, 15)"), s("10.1.2.240/28"));
        assert_eq!(value("cidrsubnet(\"fd00:fd12:3456:7890::/56\", 16, 162)"), s("fd00:fd12:3456:7800:a200::/72"));
        assert_eq!(value("cidrhost(\"10.12.112.0/20\", 16)"), s("10.12.112.16"));
        assert_eq!(value("cidrhost(\"10.12.112.0/20\", 268)"), s("10.12.113.12"));
        assert_eq!(value("cidrhost(\"10.12.112.0/20\", -1)"), s("10.12.127.255"));
        assert_eq!(value("cidrhost(\"fd00:fd12:3456:7890:00a2::/72\", 34)"), s("fd00:fd12:3456:7890::22"));
        assert_eq!(value("cidrnetmask(\"172.16.0.0/12\")"), s("255.240.0.0"));
        assert!(error("cidrsubnet(\"10.0.0.0/30\", 4, 0)").contains("beyond 32"));
        assert!(error("cidrsubnet(\"10.0.0.0/16\", 2, 4)").contains("no subnet number 4"));
        assert!(error("cidrhost(\"10.0.0.0/30\", 4)").contains("has no host number 4"));
        assert!(error("cidrnetmask(\"not a cidr\")").contains("invalid CIDR expression"));
    }

    #[test]
    fn cidrsubnets_agrees_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/cidrsubnets
        let list = |items: &[&str]| Value::List(items.iter().map(|t| s(t)).collect());
        assert_eq!(
            value("cidrsubnets(\"10.1.0.0/16\", 4, 4, 8, 4)"),
            list(&["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"])
        );
        assert_eq!(
            value("cidrsubnets(\"fd00:fd12:3456:7890::/56\", 16, 16, 16, 32)"),
            list(&[
                "fd00:fd12:3456:7800::/72",
                "fd00:fd12:3456:7800:100::/72",
                "fd00:fd12:3456:7800:200::/72",
                "fd00:fd12:3456:7800:300::/88"
            ])
        );
        assert!(error("cidrsubnets(\"10.0.0.0/30\", 1, 1, 1)").contains("not enough remaining address space"));
        assert!(error("cidrsubnets(\"10.0.0.0/30\", 3)").contains("too long for an IPv4 address"));
    }
}
