//! Date and time functions on RFC 3339 timestamps, with chrono:
//! `timestamp`, `timeadd`, `timecmp`, `formatdate`.

use chrono::{DateTime, Datelike, FixedOffset, SecondsFormat, TimeDelta, Timelike, Utc};

use crate::value::Value;

use super::{Args, FnError};

/// `timestamp()`: now, in UTC, to the second. While planning the phase rule
/// in `call` makes it unknown, as Terraform's.
pub(super) fn timestamp(_args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)))
}

/// `timeadd(timestamp, duration)`: the timestamp moved by a Go-style
/// duration (`"1h30m"`, `"-10s"`, `"1.5h"`), keeping its offset.
pub(super) fn timeadd(args: &Args) -> Result<Value, FnError> {
    let time = rfc3339(args, 0)?;
    let text = args.string(1)?;
    let delta = parse_duration(&text).ok_or_else(|| FnError::arg(1, format!("invalid duration {text:?}")))?;
    let moved = time.checked_add_signed(delta).ok_or_else(|| FnError::call("the result is out of range"))?;
    Ok(Value::String(moved.to_rfc3339_opts(SecondsFormat::Secs, true)))
}

/// `timecmp(a, b)`: -1, 0 or 1 as instant `a` is before, at or after `b`.
pub(super) fn timecmp(args: &Args) -> Result<Value, FnError> {
    let (a, b) = (rfc3339(args, 0)?, rfc3339(args, 1)?);
    Ok(Value::int(a.cmp(&b) as i64))
}

/// `formatdate(spec, timestamp)`: the timestamp written in Terraform's
/// format language (`YYYY-MM-DD`, `'literal'`, …).
pub(super) fn formatdate(args: &Args) -> Result<Value, FnError> {
    let spec = args.string(0)?;
    let time = rfc3339(args, 1)?;
    let mut out = String::new();
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            i = quoted(&chars, i + 1, &mut out).ok_or_else(|| FnError::arg(0, "unterminated literal '"))?;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        if c.is_ascii_alphabetic() {
            let verb: String = chars[i..i + run].iter().collect();
            out.push_str(
                &date_verb(&verb, &time)
                    .ok_or_else(|| FnError::arg(0, format!("invalid date format verb {verb:?}")))?,
            );
        } else {
            out.extend(&chars[i..i + run]);
        }
        i += run;
    }
    Ok(Value::String(out))
}

/// Copies a quoted literal starting after its opening quote (`''` is a
/// quote); returns the index after the closing quote.
fn quoted(chars: &[char], mut i: usize, out: &mut String) -> Option<usize> {
    if chars.get(i) == Some(&'\'') {
        out.push('\'');
        return Some(i + 1);
    }
    loop {
        match chars.get(i)? {
            '\'' if chars.get(i + 1) == Some(&'\'') => {
                out.push('\'');
                i += 2;
            }
            '\'' => return Some(i + 1),
            c => {
                out.push(*c);
                i += 1;
            }
        }
    }
}

/// One run of a format letter written out, or `None` for an unknown verb.
fn date_verb(verb: &str, t: &DateTime<FixedOffset>) -> Option<String> {
    let hour12 = match t.hour() % 12 {
        0 => 12,
        h => h,
    };
    let pm = t.hour() >= 12;
    Some(match verb {
        "YYYY" => format!("{:04}", t.year()),
        "YY" => format!("{:02}", t.year().rem_euclid(100)),
        "M" => t.month().to_string(),
        "MM" => format!("{:02}", t.month()),
        "MMM" => t.format("%b").to_string(),
        "MMMM" => t.format("%B").to_string(),
        "D" => t.day().to_string(),
        "DD" => format!("{:02}", t.day()),
        "EEE" => t.format("%a").to_string(),
        "EEEE" => t.format("%A").to_string(),
        "h" => t.hour().to_string(),
        "hh" => format!("{:02}", t.hour()),
        "H" => hour12.to_string(),
        "HH" => format!("{hour12:02}"),
        "AA" => if pm { "PM" } else { "AM" }.to_string(),
        "aa" => if pm { "pm" } else { "am" }.to_string(),
        "m" => t.minute().to_string(),
        "mm" => format!("{:02}", t.minute()),
        "s" => t.second().to_string(),
        "ss" => format!("{:02}", t.second()),
        "Z" if t.offset().local_minus_utc() == 0 => "Z".to_string(),
        "Z" | "ZZZZZ" => t.format("%:z").to_string(),
        "ZZZ" if t.offset().local_minus_utc() == 0 => "UTC".to_string(),
        "ZZZ" | "ZZZZ" => t.format("%z").to_string(),
        _ => return None,
    })
}

/// Argument `i` as an RFC 3339 timestamp.
fn rfc3339(args: &Args, i: usize) -> Result<DateTime<FixedOffset>, FnError> {
    let text = args.string(i)?;
    DateTime::parse_from_rfc3339(&text)
        .map_err(|e| FnError::arg(i, format!("not a valid RFC3339 timestamp: {text:?} ({e})")))
}

/// A Go duration (`time.ParseDuration`): an optional sign, then one or more
/// decimal numbers each with a unit of `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`.
fn parse_duration(text: &str) -> Option<TimeDelta> {
    let (negative, mut rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(TimeDelta::zero());
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        nanos += number * scale;
    }
    let nanos = nanos.round() as i64;
    Some(TimeDelta::nanoseconds(if negative { -nanos } else { nanos }))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use crate::value::Value;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn formatdate_agrees_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/formatdate
        let at = |spec: &str, time: &str| value(&format!("formatdate({spec:?}, {time:?})"));
        assert_eq!(at("DD MMM YYYY hh:mm ZZZ", "2018-01-02T23:12:01Z"), s("02 Jan 2018 23:12 UTC"));
        assert_eq!(at("EEEE, DD-MMM-YY hh:mm:ss ZZZ", "2018-01-02T23:12:01Z"), s("Tuesday, 02-Jan-18 23:12:01 UTC"));
        assert_eq!(
            at("EEE, DD MMM YYYY hh:mm:ss ZZZ", "2018-01-02T23:12:01-08:00"),
            s("Tue, 02 Jan 2018 23:12:01 -0800")
        );
        assert_eq!(at("MMM DD, YYYY", "2018-01-02T23:12:01Z"), s("Jan 02, 2018"));
        assert_eq!(at("HH:mmaa", "2018-01-02T23:12:01Z"), s("11:12pm"));
        // Checked with `terraform console` 1.11.4.
        assert_eq!(
            at("h:mm AA 'o''clock' Z ZZZZ ZZZZZ M D YY", "2018-01-02T03:04:05.123+05:30"),
            s("3:04 AM o'clock +05:30 +0530 +05:30 1 2 18")
        );
        assert!(error("formatdate(\"YYY\", \"2018-01-02T23:12:01Z\")").contains("invalid date format verb"));
        assert!(error("formatdate(\"YYYY\", \"yesterday\")").contains("not a valid RFC3339 timestamp"));
    }

    #[test]
    fn timeadd_and_timecmp_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/timeadd
        assert_eq!(value("timeadd(\"2017-11-22T00:00:00Z\", \"10m\")"), s("2017-11-22T00:10:00Z"));
        assert_eq!(value("timeadd(\"2017-11-22T00:00:00Z\", \"-1h30m\")"), s("2017-11-21T22:30:00Z"));
        assert_eq!(value("timeadd(\"2017-11-22T00:00:00+01:00\", \"1.5h\")"), s("2017-11-22T01:30:00+01:00"));
        assert!(error("timeadd(\"2017-11-22T00:00:00Z\", \"10 minutes\")").contains("invalid duration"));
        // …/functions/timecmp
        assert_eq!(value("timecmp(\"2017-11-22T00:00:00Z\", \"2017-11-22T00:00:00Z\")"), Value::int(0));
        assert_eq!(value("timecmp(\"2017-11-22T00:00:00Z\", \"2017-11-22T01:00:00+01:00\")"), Value::int(0));
        assert_eq!(value("timecmp(\"2017-11-22T01:00:00Z\", \"2017-11-22T00:59:00Z\")"), Value::int(1));
        assert_eq!(value("timecmp(\"2017-11-22T01:00:00Z\", \"2017-11-22T01:00:00-01:00\")"), Value::int(-1));
    }

    #[test]
    fn timestamp_is_unknown_while_planning() {
        let planned = value("timestamp()");
        assert!(planned.is_unknown(), "{planned:?}");
        let ctx = super::super::super::EvalContext {
            phase: super::super::Phase::Apply,
            ..super::super::super::EvalContext::new(".")
        };
        let now = super::super::super::testutil::eval_in("timestamp()", &ctx).unwrap();
        let text = now.as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(text).is_ok() && text.ends_with('Z'), "{text}");
    }
}
