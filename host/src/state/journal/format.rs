//! How the journal's [`Record`]s are written as lines, and read back: one
//! format for every backend (the local file's lines, PostgreSQL's rows).
//!
//! Format 2, written since, is small: a journal writes one line per step
//! of an apply, and the whole state at its end, so every byte a line
//! repeats is paid once per resource. Its first line names the state and
//! when the journal started:
//!
//! ```text
//! {"start":{"journal_version":2,"lineage":"…","serial":4,"at":1764083460}}
//! {"i":["null_resource.a","create","9c1e0a8f3b2d4e6f7a81",0]}
//! {"s":{"e":1,"p":"null","a":{"id":"…","triggers":null}}}
//! {"i":["null_resource.b","delete","0b8e…",2,"0000000a"]}
//! {"e":2}
//! {"outputs":{…}}
//! ```
//!
//! - `i`, an intent: `[address, operation, idempotency key, seconds since
//!   the start's "at" (or the time as text), deposed key if any]`. Intents
//!   are numbered from 1 in the order they are written; later lines refer
//!   to one by its number instead of repeating its key and address.
//! - `s`, an instance as it now is: [`InstanceState`]'s fields under
//!   one-letter names (`p` provider, `v` schema version, `a` attributes,
//!   `x` private bytes in base64, `d` dependencies, `s` status, `c`
//!   create_before_destroy, `o` deposed objects, `z` sensitive paths),
//!   each left out at its default; `e`, the intent it ends; `n`, its
//!   address, left out when the intent it ends has the same.
//! - `r`, an instance gone from the state: `e` and/or `n`, as for `s`.
//! - `e`, an intent that ended without a change, by number.
//! - `outputs`, the root module's outputs, as the state holds them.
//!
//! Format 1, written by earlier releases, is read still, so that a journal
//! an older cairn left after a crash replays: one [`Record`] a line in its
//! serde form (`{"intent":{…}}`, `{"set":{"instance":{…},"ends":"key"}}`,
//! …), every line whole.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Record;
use crate::addr::{InstanceAddr, ResourceAddr};
use crate::state::lock::{format_utc, parse_utc};
use crate::state::{
    Attributes, DeposedObject, InstanceState, InstanceStatus, OutputState, PendingOperation, base64_bytes,
};
use crate::value::Path;

/// The format journals are written in; their first line says which.
pub const JOURNAL_VERSION: u32 = 2;

/// The format of the journals of earlier releases, still read.
const FORMAT_1: u32 = 1;

/// The first line of every journal, whatever its format.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FirstLine {
    Start(Start),
}

/// What the first line says: the state the records apply to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Start {
    /// The journal's format.
    pub journal_version: u32,
    /// The state's lineage.
    pub lineage: String,
    /// The state's serial when the journal started.
    pub serial: u64,
    /// When the journal started, in seconds since the Unix epoch (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<u64>,
}

/// A line of format 2 after the first, as written (borrowing the record).
#[derive(Serialize)]
enum LineOut<'a> {
    #[serde(rename = "i")]
    Intent(IntentLine<'a>),
    #[serde(rename = "s")]
    Set(SetOut<'a>),
    #[serde(rename = "r")]
    Remove(RemoveLine),
    #[serde(rename = "e")]
    End(u64),
    #[serde(rename = "outputs")]
    Outputs(&'a BTreeMap<String, OutputState>),
}

/// A line of format 2 after the first, as read.
#[derive(Deserialize)]
enum LineIn {
    #[serde(rename = "i")]
    Intent(IntentLineIn),
    #[serde(rename = "s")]
    Set(Box<SetIn>),
    #[serde(rename = "r")]
    Remove(RemoveLine),
    #[serde(rename = "e")]
    End(u64),
    #[serde(rename = "outputs")]
    Outputs(BTreeMap<String, OutputState>),
}

/// When an intent started: seconds after the journal's start, or the time
/// as [`PendingOperation::started`] says it when that is not one this
/// cairn wrote (so that nothing is lost).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Started {
    After(u64),
    Text(String),
}

/// `[address, operation, key, started]`, or with the deposed key fifth.
struct IntentLine<'a> {
    addr: &'a InstanceAddr,
    operation: &'a str,
    key: &'a str,
    started: Started,
    deposed: Option<&'a str>,
}

impl Serialize for IntentLine<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(4 + usize::from(self.deposed.is_some())))?;
        seq.serialize_element(self.addr)?;
        seq.serialize_element(self.operation)?;
        seq.serialize_element(self.key)?;
        seq.serialize_element(&self.started)?;
        if let Some(deposed) = self.deposed {
            seq.serialize_element(deposed)?;
        }
        seq.end()
    }
}

/// [`IntentLine`] as read.
#[derive(Deserialize)]
#[serde(untagged)]
enum IntentLineIn {
    Current(InstanceAddr, String, String, Started),
    Deposed(InstanceAddr, String, String, Started, String),
}

/// An instance as a `s` line holds it (see the module's documentation).
#[derive(Serialize)]
struct SetOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    e: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<&'a InstanceAddr>,
    p: &'a str,
    #[serde(skip_serializing_if = "is_zero")]
    v: u64,
    a: &'a Attributes,
    #[serde(skip_serializing_if = "<[u8]>::is_empty", with = "base64_bytes")]
    x: &'a [u8],
    #[serde(skip_serializing_if = "<[ResourceAddr]>::is_empty")]
    d: &'a [ResourceAddr],
    #[serde(skip_serializing_if = "is_ready")]
    s: InstanceStatus,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    c: bool,
    #[serde(skip_serializing_if = "<[DeposedObject]>::is_empty")]
    o: &'a [DeposedObject],
    #[serde(skip_serializing_if = "<[Path]>::is_empty")]
    z: &'a [Path],
}

/// [`SetOut`] as read.
#[derive(Deserialize)]
struct SetIn {
    #[serde(default)]
    e: Option<u64>,
    #[serde(default)]
    n: Option<InstanceAddr>,
    p: String,
    #[serde(default)]
    v: u64,
    a: Attributes,
    #[serde(default, with = "base64_bytes")]
    x: Vec<u8>,
    #[serde(default)]
    d: Vec<ResourceAddr>,
    #[serde(default)]
    s: InstanceStatus,
    #[serde(default)]
    c: bool,
    #[serde(default)]
    o: Vec<DeposedObject>,
    #[serde(default)]
    z: Vec<Path>,
}

/// An `r` line: the intent it ends and/or the address gone.
#[derive(Serialize, Deserialize)]
struct RemoveLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<InstanceAddr>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_ready(s: &InstanceStatus) -> bool {
    *s == InstanceStatus::Ready
}

/// An intent written and not ended yet.
#[derive(Debug)]
struct OpenIntent {
    number: u64,
    addr: InstanceAddr,
}

/// Writes one journal's records as lines of the current format. It
/// remembers the intents still open, which later lines refer to by number:
/// lines must be stored in the order they were encoded.
#[derive(Debug)]
pub struct Encoder {
    /// The start's time, which intents' times count from.
    at: u64,
    /// The number the next intent gets.
    next: u64,
    /// Intents not yet ended, by idempotency key.
    open: HashMap<String, OpenIntent>,
}

impl Encoder {
    /// Starts a journal over the state of `lineage` at `serial`: the
    /// encoder, and the journal's first line (without a newline).
    pub fn start(lineage: &str, serial: u64) -> Result<(Encoder, String), serde_json::Error> {
        let at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let start = Start { journal_version: JOURNAL_VERSION, lineage: lineage.to_string(), serial, at: Some(at) };
        let line = serde_json::to_string(&FirstLine::Start(start))?;
        Ok((Encoder { at, next: 1, open: HashMap::new() }, line))
    }

    /// Whether the intent with idempotency key `key` was written and not
    /// ended yet.
    pub fn is_open(&self, key: &str) -> bool {
        self.open.contains_key(key)
    }

    /// The line (without a newline) of `record`, or `None` for a record
    /// that changes nothing: the end of an intent that is not open.
    pub fn encode(&mut self, record: &Record) -> Result<Option<String>, serde_json::Error> {
        let line = match record {
            Record::Start { .. } => return Ok(None),
            Record::Intent(op) => {
                let line = LineOut::Intent(IntentLine {
                    addr: &op.addr,
                    operation: &op.operation,
                    key: &op.idempotency_key,
                    started: self.started(&op.started),
                    deposed: op.deposed.as_deref(),
                });
                let text = serde_json::to_string(&line)?;
                self.open.insert(op.idempotency_key.clone(), OpenIntent { number: self.next, addr: op.addr.clone() });
                self.next += 1;
                return Ok(Some(text));
            }
            Record::Set { instance, ends } => {
                let (e, n) = self.ending(ends.as_deref(), &instance.addr);
                LineOut::Set(SetOut {
                    e,
                    n: n.map(|_| &instance.addr),
                    p: &instance.provider,
                    v: instance.schema_version,
                    a: &instance.attributes,
                    x: &instance.private,
                    d: &instance.dependencies,
                    s: instance.status,
                    c: instance.create_before_destroy,
                    o: &instance.deposed,
                    z: &instance.sensitive_attributes,
                })
            }
            Record::Remove { addr, ends } => {
                let (e, n) = self.ending(ends.as_deref(), addr);
                LineOut::Remove(RemoveLine { e, n: n.cloned() })
            }
            Record::End { key } => match self.open.remove(key.as_str()) {
                Some(intent) => LineOut::End(intent.number),
                None => return Ok(None),
            },
            Record::Outputs(outputs) => LineOut::Outputs(outputs),
        };
        serde_json::to_string(&line).map(Some)
    }

    /// The number of the open intent `ends` names (which it closes), and
    /// `addr` unless that intent names it already.
    fn ending<'a>(&mut self, ends: Option<&str>, addr: &'a InstanceAddr) -> (Option<u64>, Option<&'a InstanceAddr>) {
        match ends.and_then(|key| self.open.remove(key)) {
            Some(intent) if intent.addr == *addr => (Some(intent.number), None),
            Some(intent) => (Some(intent.number), Some(addr)),
            None => (None, Some(addr)),
        }
    }

    /// An intent's start time, as seconds after the journal's.
    fn started(&self, text: &str) -> Started {
        match parse_utc(text) {
            Some(secs) if secs >= self.at && format_utc(UNIX_EPOCH + Duration::from_secs(secs)) == text => {
                Started::After(secs - self.at)
            }
            _ => Started::Text(text.to_string()),
        }
    }
}

/// Reads one journal's lines back into records.
pub(crate) struct Decoder {
    format: u32,
    /// The start's time (format 2).
    at: u64,
    /// Every intent read so far, by number - 1: its key and address.
    intents: Vec<(String, InstanceAddr)>,
}

impl Decoder {
    /// Reads the first line: what the journal is over, and the decoder of
    /// the rest. A format newer than this cairn reads is an error that says
    /// so.
    pub fn start(line: &[u8]) -> Result<(Start, Decoder), String> {
        let FirstLine::Start(start) =
            serde_json::from_slice(line).map_err(|e| match serde_json::from_slice::<serde_json::Value>(line) {
                Ok(_) => "the first line is not the journal's start".to_string(),
                Err(_) => e.to_string(),
            })?;
        if start.journal_version > JOURNAL_VERSION {
            return Err(format!(
                "journal_version {} is newer than this cairn reads (up to {JOURNAL_VERSION}): finish the apply with the cairn that started it",
                start.journal_version
            ));
        }
        let decoder = Decoder { format: start.journal_version, at: start.at.unwrap_or(0), intents: Vec::new() };
        Ok((start, decoder))
    }

    /// The record of a line after the first.
    pub fn decode(&mut self, line: &[u8]) -> Result<Record, String> {
        if self.format == FORMAT_1 {
            return serde_json::from_slice(line).map_err(|e| e.to_string());
        }
        let line: LineIn = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        Ok(match line {
            LineIn::Intent(intent) => {
                let (addr, operation, idempotency_key, started, deposed) = match intent {
                    IntentLineIn::Current(a, o, k, t) => (a, o, k, t, None),
                    IntentLineIn::Deposed(a, o, k, t, d) => (a, o, k, t, Some(d)),
                };
                self.intents.push((idempotency_key.clone(), addr.clone()));
                let started = match started {
                    Started::After(secs) => format_utc(UNIX_EPOCH + Duration::from_secs(self.at + secs)),
                    Started::Text(text) => text,
                };
                Record::Intent(PendingOperation { addr, deposed, operation, idempotency_key, started })
            }
            LineIn::Set(set) => {
                let SetIn { e, n, p, v, a, x, d, s, c, o, z } = *set;
                let (ends, addr) = self.ending(e, n)?;
                Record::Set {
                    instance: Box::new(InstanceState {
                        addr,
                        provider: p,
                        schema_version: v,
                        attributes: a,
                        private: x,
                        dependencies: d,
                        status: s,
                        create_before_destroy: c,
                        deposed: o,
                        sensitive_attributes: z,
                    }),
                    ends,
                }
            }
            LineIn::Remove(RemoveLine { e, n }) => {
                let (ends, addr) = self.ending(e, n)?;
                Record::Remove { addr, ends }
            }
            LineIn::End(number) => Record::End { key: self.intent(number)?.0.clone() },
            LineIn::Outputs(outputs) => Record::Outputs(outputs),
        })
    }

    /// The key of intent `e` and the address: `n`, or the intent's.
    fn ending(&self, e: Option<u64>, n: Option<InstanceAddr>) -> Result<(Option<String>, InstanceAddr), String> {
        match (e, n) {
            (Some(number), n) => {
                let (key, addr) = self.intent(number)?;
                Ok((Some(key.clone()), n.unwrap_or_else(|| addr.clone())))
            }
            (None, Some(addr)) => Ok((None, addr)),
            (None, None) => Err("the line names neither an intent (\"e\") nor an address (\"n\")".to_string()),
        }
    }

    /// The key and address of intent `number`.
    fn intent(&self, number: u64) -> Result<&(String, InstanceAddr), String> {
        usize::try_from(number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| self.intents.get(i))
            .ok_or_else(|| format!("it refers to intent {number}, but only {} were written before", self.intents.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::lock::format_utc;

    fn addr(s: &str) -> InstanceAddr {
        s.parse().unwrap()
    }

    fn round_trip(records: &[Record]) -> (Vec<String>, Vec<Record>) {
        let (mut encoder, first) = Encoder::start("l", 3).unwrap();
        let lines: Vec<String> = records.iter().filter_map(|r| encoder.encode(r).unwrap()).collect();
        let (start, mut decoder) = Decoder::start(first.as_bytes()).unwrap();
        assert_eq!((start.journal_version, start.lineage.as_str(), start.serial), (JOURNAL_VERSION, "l", 3));
        let read = lines.iter().map(|l| decoder.decode(l.as_bytes()).unwrap()).collect();
        (lines, read)
    }

    fn now_op(addr_: &str, deposed: Option<&str>, op: &str, key: &str) -> PendingOperation {
        PendingOperation::now(addr(addr_), deposed, op, key)
    }

    #[test]
    fn every_record_reads_back_as_it_was_written() {
        let mut full = InstanceState::new(addr("t.a[\"k\"]"), "p", 2, serde_json::json!({"id": "1", "n": [1, 2]}));
        full.private = vec![0, 1, 255];
        full.dependencies = vec!["t.b".parse().unwrap()];
        full.status = InstanceStatus::Tainted;
        full.create_before_destroy = true;
        full.deposed =
            vec![DeposedObject { key: "0000000a".into(), attributes: serde_json::json!({}).into(), private: vec![1] }];
        full.sensitive_attributes = vec![Path::root().attr("n")];
        let mut old = now_op("t.x", Some("0000000b"), "delete", "kd");
        old.started = "2001-02-03T04:05:06Z".to_string();
        let records = vec![
            Record::Intent(now_op("t.a[\"k\"]", None, "create", "ka")),
            Record::Set { instance: Box::new(full), ends: Some("ka".into()) },
            Record::Intent(old),
            Record::Intent(now_op("t.y", None, "update", "ky")),
            // A change of another instance ending an intent names both.
            Record::Remove { addr: addr("t.z"), ends: Some("ky".into()) },
            Record::End { key: "kd".into() },
            Record::Set {
                instance: Box::new(InstanceState::new(addr("t.w"), "p", 0, serde_json::json!(null))),
                ends: None,
            },
            Record::Remove { addr: addr("t.w"), ends: None },
            Record::Outputs(BTreeMap::from([(
                "o".to_string(),
                OutputState::new(&crate::value::Value::string("x"), true),
            )])),
        ];
        let (_, read) = round_trip(&records);
        assert_eq!(read, records);
    }

    #[test]
    fn a_change_ending_its_intent_repeats_neither_its_key_nor_its_address() {
        let key = "0123456789abcdef0123";
        let inst = InstanceState::new(addr("bench_thing.r1234"), "bench", 0, serde_json::json!({"id": "r1234"}));
        let records = [
            Record::Intent(now_op("bench_thing.r1234", None, "create", key)),
            Record::Set { instance: Box::new(inst), ends: Some(key.into()) },
        ];
        let (lines, _) = round_trip(&records);
        // Its time: 0 seconds after the start, or 1 when a second began in between.
        let intent = |t: u64| format!("{{\"i\":[\"bench_thing.r1234\",\"create\",\"{key}\",{t}]}}");
        assert!(lines[0] == intent(0) || lines[0] == intent(1), "{}", lines[0]);
        assert_eq!(lines[1], "{\"s\":{\"e\":1,\"p\":\"bench\",\"a\":{\"id\":\"r1234\"}}}");
    }

    #[test]
    fn ending_an_intent_that_is_not_open_writes_nothing() {
        let (mut encoder, _) = Encoder::start("l", 0).unwrap();
        assert_eq!(encoder.encode(&Record::End { key: "k".into() }).unwrap(), None);
        encoder.encode(&Record::Intent(now_op("t.a", None, "create", "k"))).unwrap();
        assert!(encoder.is_open("k"));
        assert!(encoder.encode(&Record::End { key: "k".into() }).unwrap().is_some());
        assert!(!encoder.is_open("k"));
        assert_eq!(encoder.encode(&Record::End { key: "k".into() }).unwrap(), None);
    }

    #[test]
    fn a_reference_to_an_intent_never_written_is_an_error() {
        let (_, mut decoder) = Decoder::start(Encoder::start("l", 0).unwrap().1.as_bytes()).unwrap();
        let e = decoder.decode(b"{\"e\":3}").err().unwrap();
        assert!(e.contains("intent 3") && e.contains("only 0"), "{e}");
    }

    #[test]
    fn format_1_lines_are_read_as_they_were_written() {
        let started = format_utc(SystemTime::now());
        let lines = [
            r#"{"start":{"journal_version":1,"lineage":"l","serial":2}}"#.to_string(),
            format!(
                r#"{{"intent":{{"addr":"t.a","operation":"create","idempotency_key":"{}","started":"{started}"}}}}"#,
                "f".repeat(32)
            ),
            format!(
                r#"{{"set":{{"instance":{{"addr":"t.a","provider":"p","schema_version":0,"attributes":{{"id":"1"}},"dependencies":[],"status":"ready"}},"ends":"{}"}}}}"#,
                "f".repeat(32)
            ),
        ];
        let (start, mut decoder) = Decoder::start(lines[0].as_bytes()).unwrap();
        assert_eq!((start.journal_version, start.serial), (1, 2));
        let Record::Intent(op) = decoder.decode(lines[1].as_bytes()).unwrap() else { panic!("not an intent") };
        assert_eq!((op.idempotency_key.len(), op.started), (32, started));
        let Record::Set { instance, ends } = decoder.decode(lines[2].as_bytes()).unwrap() else { panic!("not a set") };
        assert_eq!((instance.addr, ends.unwrap().len()), (addr("t.a"), 32));
    }

    #[test]
    fn a_newer_format_is_refused_saying_what_to_do() {
        let line = format!(r#"{{"start":{{"journal_version":{},"lineage":"l","serial":2}}}}"#, JOURNAL_VERSION + 1);
        let e = Decoder::start(line.as_bytes()).err().unwrap();
        assert!(e.contains("newer than this cairn reads") && e.contains("the cairn that started it"), "{e}");
    }
}
