//! The `random` provider: random values generated once and then kept in
//! state, like Terraform's `random` provider. Randomness comes from the
//! host through WASI `random`.
//!
//! - `random_id`: `byte_length` random bytes, shown as `hex`, `b64_url`
//!   (URL-safe base64, no padding), `b64_std` (standard base64), `dec` (the
//!   bytes as one big-endian number); each prefixed with `prefix`. `id` is
//!   `b64_url` without the prefix. Can be imported by its `b64_url`
//!   (`"prefix,b64url"` to set a prefix).
//! - `random_password`: `length` characters drawn from the enabled classes
//!   (`upper`, `lower`, `numeric`, `special`, default all true;
//!   `override_special` replaces the special characters), with at least
//!   `min_upper`/`min_lower`/`min_numeric`/`min_special` of each. `result` is
//!   sensitive; `id` is `"none"`. `bcrypt_hash` (sensitive) is the bcrypt
//!   hash of `result` (cost 10, `$2a$`, of its first 72 bytes, as
//!   hashicorp/random's); a state written before it existed gets one from
//!   its `result` when it is read, as Terraform's state upgrade does,
//!   without a new password (salted from the password: see
//!   `upgraded_bcrypt_hash`). `number` is hashicorp/random's deprecated
//!   name of `numeric`: either one configured sets both.
//!
//! - `random_string`: the same arguments and characters as
//!   `random_password`, but `result` is not sensitive and `id` is `result`.
//! - `random_pet`: `length` words (default 2) joined by `separator`
//!   (default `-`), after `prefix` if set: adverbs, an adjective, then an
//!   animal, as Terraform's (`id`, e.g. `quickly-brave-otter`).
//! - `random_integer`: `result`, a whole number from `min` to `max`
//!   inclusive; `id` is it as a string.
//! - `random_shuffle`: `result`, the strings of `input` in a random order,
//!   only the first `result_count` if that is set; `id` is `"-"`.
//! - `random_uuid`: `result`, a random (version 4) UUID; `id` is it too.
//!
//! The ephemeral resource type `random_password` (Terraform 1.10's
//! `ephemeral "random_password" "db" { length = 20 }`, as hashicorp/random
//! 3.7 has it) draws a new password every run, from the same arguments
//! and characters as the resource but without `keepers`; its `result` is
//! sensitive and never stored: it goes into write-only attributes and
//! other ephemeral places; it has the resource's `bcrypt_hash` too.
//!
//! Schema versions are hashicorp/random's (3.7): `random_password` 3,
//! `random_string` 2, the others 0, so that a state Terraform wrote with
//! hashicorp/random is read as it is (`cairn state migrate`); an older
//! state of a password or string (hashicorp's, or an earlier cairn's, whose
//! versions were 0 and 1) is upgraded as hashicorp/random upgrades it.
//!
//! `random_integer` and `random_shuffle` take a `seed`: the same seed gives
//! the same result every time (but not the very numbers Terraform's Go
//! generator gives for it).
//!
//! Every argument, `keepers` included, forces a new value: that is how a
//! user asks for one.

#![warn(missing_docs)]

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, OpenResponse, Path, PlanRequest, PlanResponse, Provider,
    ProviderSchema, Schema, Type, Value, random,
};

/// The provider; it has no configuration.
pub struct Random;

/// A ceiling on `byte_length`: the decimal form costs quadratic time, and
/// no real identifier is longer.
const MAX_ID_BYTES: i64 = 4096;
/// A ceiling on `length`: longer is a mistake, and memory is capped in the
/// sandbox.
const MAX_PASSWORD_LENGTH: i64 = 1 << 16;

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const NUMERIC: &str = "0123456789";
/// hashicorp/random's bcrypt cost for `bcrypt_hash` (Go's `bcrypt.DefaultCost`).
const BCRYPT_COST: u32 = 10;
/// The schema version of the `random_password` resource, hashicorp/random's:
/// 1 added `bcrypt_hash`, 2 `numeric` (beside `number`), 3 checks the hash.
const PASSWORD_SCHEMA_VERSION: u64 = 3;
/// The schema version of the `random_string` resource, hashicorp/random's:
/// 2 added `numeric` (beside `number`).
const STRING_SCHEMA_VERSION: u64 = 2;

/// Terraform's default special characters.
const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// The character classes of `random_password`: (switch, minimum, default set).
const CLASSES: [(&str, &str, &str); 4] = [
    ("upper", "min_upper", UPPER),
    ("lower", "min_lower", LOWER),
    ("numeric", "min_numeric", NUMERIC),
    ("special", "min_special", SPECIAL),
];

impl Provider for Random {
    fn schema() -> ProviderSchema {
        let keepers = || Attr::map(Type::String).optional().description("Any change generates a new value.");
        // random_password and random_string: the same characters, a
        // result that is a secret or not.
        let characters = |version: u64, description: &str, result: Attr, id: &str| {
            let mut schema = Schema::new(version)
                .description(description)
                .attribute("length", Attr::number().required().description("Number of characters."))
                .attribute("keepers", keepers())
                .attribute(
                    "override_special",
                    Attr::string().optional().description("Special characters to use instead."),
                )
                .attribute("result", result)
                .attribute("id", Attr::string().computed().description(id))
                .attribute(
                    "number",
                    Attr::bool()
                        .optional()
                        .computed()
                        .description("Deprecated (hashicorp/random's): use `numeric`, which it sets."),
                );
            for (switch, min, _) in CLASSES {
                schema = schema
                    .attribute(switch, Attr::bool().optional().computed().description("Use this class; default true."))
                    .attribute(min, Attr::number().optional().computed().description("At least this many; default 0."));
            }
            schema
        };
        let password = characters(
            PASSWORD_SCHEMA_VERSION,
            "A random password, kept in state (sensitive).",
            Attr::string().computed().sensitive().description("The password."),
            "Always \"none\".",
        )
        .attribute("bcrypt_hash", bcrypt_hash_attr());
        let string = characters(
            STRING_SCHEMA_VERSION,
            "A random string, kept in state.",
            Attr::string().computed().description("The string."),
            "The string.",
        );
        let pet = Schema::new(0)
            .description("A random name of words, like quickly-brave-otter.")
            .attribute("length", Attr::number().optional().computed().description("Number of words; default 2."))
            .attribute("separator", Attr::string().optional().computed().description("Between words; default \"-\"."))
            .attribute("prefix", Attr::string().optional().description("A first word."))
            .attribute("keepers", keepers())
            .attribute("id", Attr::string().computed().description("The name."));
        let seed = || Attr::string().optional().description("The same seed gives the same result.");
        let integer = Schema::new(0)
            .description("A random whole number in a range.")
            .attribute("min", Attr::number().required().description("The smallest possible result."))
            .attribute("max", Attr::number().required().description("The largest possible result."))
            .attribute("seed", seed())
            .attribute("keepers", keepers())
            .attribute("result", Attr::number().computed().description("The number."))
            .attribute("id", Attr::string().computed().description("The number, as a string."));
        let shuffle = Schema::new(0)
            .description("A random permutation of a list of strings.")
            .attribute("input", Attr::list(Type::String).required().description("The strings to shuffle."))
            .attribute("result_count", Attr::number().optional().description("How many to keep; default all of them."))
            .attribute("seed", seed())
            .attribute("keepers", keepers())
            .attribute("result", Attr::list(Type::String).computed().description("The shuffled strings."))
            .attribute("id", Attr::string().computed().description("Always \"-\"."));
        let uuid = Schema::new(0)
            .description("A random UUID (version 4).")
            .attribute("keepers", keepers())
            .attribute("result", Attr::string().computed().description("The UUID."))
            .attribute("id", Attr::string().computed().description("The UUID."));
        ProviderSchema::new()
            .resource("random_integer", integer)
            .resource("random_shuffle", shuffle)
            .resource("random_uuid", uuid)
            .resource("random_pet", pet)
            .resource("random_string", string)
            .resource(
                "random_id",
                Schema::new(0)
                    .description("Random bytes, for unique names.")
                    .attribute("byte_length", Attr::number().required().description("Number of random bytes."))
                    .attribute("keepers", keepers())
                    .attribute("prefix", Attr::string().optional().description("Put before each output."))
                    .attribute("hex", Attr::string().computed().description("prefix + lowercase hex."))
                    .attribute("b64_url", Attr::string().computed().description("prefix + URL-safe base64."))
                    .attribute("b64_std", Attr::string().computed().description("prefix + standard base64."))
                    .attribute("dec", Attr::string().computed().description("prefix + big-endian decimal."))
                    .attribute("id", Attr::string().computed().description("URL-safe base64, no prefix.")),
            )
            .resource("random_password", password)
            .ephemeral_resource("random_password", ephemeral_password())
    }

    fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Random)
    }

    fn validate(&self, type_name: &str, config: &Value) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut in_range = |name: &str, min: i64, max: i64| {
            let v = config.get_attr(name);
            if v.is_known() && !v.is_null() && v.as_i64().is_none_or(|n| n < min || n > max) {
                out.push(
                    Diagnostic::error(format!("`{name}` must be a whole number from {min} to {max}"))
                        .at(Path::attr(name)),
                );
            }
        };
        if type_name == "random_id" {
            in_range("byte_length", 1, MAX_ID_BYTES);
        } else if type_name == "random_pet" {
            in_range("length", 1, MAX_PET_WORDS);
        } else if type_name == "random_integer" {
            let (min, max) = (config.get_attr("min").as_i64(), config.get_attr("max").as_i64());
            for (name, v) in [("min", &min), ("max", &max)] {
                if config.get_attr(name).is_known() && !config.get_attr(name).is_null() && v.is_none() {
                    out.push(Diagnostic::error(format!("`{name}` must be a whole number")).at(Path::attr(name)));
                }
            }
            if let (Some(min), Some(max)) = (min, max)
                && min > max
            {
                out.push(
                    Diagnostic::error("Minimum value needs to be smaller than or equal to maximum value")
                        .at(Path::attr("min")),
                );
            }
        } else if type_name == "random_shuffle" {
            in_range("result_count", 0, i64::MAX);
        } else if type_name != "random_uuid" {
            in_range("length", 1, MAX_PASSWORD_LENGTH);
            for (_, min, _) in CLASSES {
                in_range(min, 0, MAX_PASSWORD_LENGTH);
            }
        }
        out
    }

    fn validate_ephemeral(&self, type_name: &str, config: &Value) -> Vec<Diagnostic> {
        // The same ranges as the resource's.
        self.validate(type_name, config)
    }

    /// A new password every time: the resource's generator, on the
    /// configuration with the classes' defaults filled in.
    fn open_ephemeral(&self, type_name: &str, config: Value) -> Result<OpenResponse, Vec<Diagnostic>> {
        if type_name != "random_password" {
            return Err(Diagnostic::error(format!("Unknown ephemeral resource type `{type_name}`")).into());
        }
        let mut result = config;
        for (switch, min, _) in CLASSES {
            if result.get_attr(switch).is_null() {
                result.set_attr(switch, true);
            }
            if result.get_attr(min).is_null() {
                result.set_attr(min, 0);
            }
        }
        let generated = password(&result)?;
        result.set_attr("bcrypt_hash", bcrypt_hash(&generated)?);
        result.set_attr("result", generated);
        Ok(OpenResponse::new(result))
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        let mut resp = PlanResponse::from_proposed(&req);
        if req.type_name == "random_pet" {
            resp = resp.default("length", 2).default("separator", "-");
        }
        if matches!(req.type_name.as_str(), "random_password" | "random_string") {
            for (switch, min, _) in CLASSES {
                resp = resp.default(switch, true).default(min, 0);
            }
            resp = number_and_numeric(resp, &req.config)?;
        }
        // Every configurable attribute forces a new value, but an
        // `override_special` stored as "" (an unset one, as hashicorp/random
        // before 3.4 stored it) that the configuration leaves unset: its
        // plan modifier updates that in place.
        let emptied = req.prior_state.get_attr("override_special").as_str() == Some("")
            && req.config.get_attr("override_special").is_null();
        let arguments: Vec<String> = req
            .schema
            .block
            .attributes
            .iter()
            .filter(|(n, a)| (a.required || a.optional) && !(emptied && n.as_str() == "override_special"))
            .map(|(n, _)| n.clone())
            .collect();
        let mut resp = resp.requires_replace(arguments);
        // What apply will certainly produce is promised now: every result
        // exists (so `random_id.x.hex != null` is known while planning),
        // and the encodings of a `random_id` start with its prefix.
        let prefix = req.config.get_attr("prefix").as_str().filter(|p| !p.is_empty()).map(str::to_owned);
        for name in ["hex", "b64_url", "b64_std", "dec", "id", "result", "bcrypt_hash"] {
            if resp.planned_state.get_attr(name).is_unknown() {
                let mut promise = Value::unknown().not_null();
                if let (Some(p), true) = (&prefix, name != "id") {
                    promise = promise.prefix(p.clone());
                }
                resp.planned_state.set_attr(name, promise);
            }
        }
        Ok(resp)
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        if req.is_delete() {
            return Ok(ApplyResponse::deleted());
        }
        let mut state = req.planned_state.clone();
        // Generated values are kept once known; only a create makes new ones.
        if !req.planned_state.get_attr("id").is_unknown() {
            return Ok(ApplyResponse::new(state));
        }
        if req.type_name == "random_id" {
            let n = state.get_attr("byte_length").as_i64().unwrap_or(0).clamp(1, MAX_ID_BYTES);
            let bytes = random::bytes(n as usize)?;
            let prefix = state.get_attr("prefix").as_str().unwrap_or_default().to_owned();
            for (name, text) in id_outputs(&bytes, &prefix) {
                state.set_attr(name, text);
            }
        } else if req.type_name == "random_pet" {
            state.set_attr("id", pet_name(&state)?);
        } else if req.type_name == "random_integer" {
            let n = integer(&state)?;
            state.set_attr("result", n);
            state.set_attr("id", n.to_string());
        } else if req.type_name == "random_shuffle" {
            state.set_attr("result", Value::list(shuffle(&state)?));
            state.set_attr("id", "-");
        } else if req.type_name == "random_uuid" {
            let id = random::uuid_v4()?;
            state.set_attr("result", id.clone());
            state.set_attr("id", id);
        } else {
            let result = password(&state)?;
            let id = if req.type_name == "random_string" {
                result.clone()
            } else {
                state.set_attr("bcrypt_hash", bcrypt_hash(&result)?);
                "none".to_string()
            };
            state.set_attr("result", result);
            state.set_attr("id", id);
        }
        Ok(ApplyResponse::new(state))
    }

    /// A state at the current version is read as it is. A
    /// `random_password` or `random_string` stored at an older version,
    /// hashicorp/random's or an earlier cairn's, is upgraded as
    /// hashicorp/random upgrades it (see [`upgrade_characters`] and
    /// [`upgrade_bcrypt_hash`]): the same password, the arguments an old
    /// import left null at their defaults. Any other version is refused.
    fn upgrade_state(&self, type_name: &str, version: u64, raw_json: &str) -> Result<Value, Vec<Diagnostic>> {
        let schema = Self::schema();
        let Some(schema) = schema.resource_schema(type_name) else {
            return Err(Diagnostic::error(format!("Unknown resource type `{type_name}`")).into());
        };
        if version == schema.version {
            return Ok(schema.state_from_json(raw_json)?);
        }
        let characters = matches!(type_name, "random_password" | "random_string");
        if !characters || version > schema.version {
            return Err(Diagnostic::error(format!("Cannot upgrade `{type_name}` state from version {version}"))
                .detail(format!("The provider's schema is at version {}.", schema.version))
                .into());
        }
        let mut json: serde_json::Value = serde_json::from_str(raw_json)
            .map_err(|e| Diagnostic::error("Stored state is not valid JSON").detail(e.to_string()))?;
        let Some(fields) = json.as_object_mut() else {
            return Err(Diagnostic::error(format!("Cannot upgrade `{type_name}` state: it is not an object")).into());
        };
        upgrade_characters(fields);
        if type_name == "random_password" {
            upgrade_bcrypt_hash(fields, version)?;
        }
        Ok(schema.state_from_json(&json.to_string())?)
    }

    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        if type_name != "random_id" {
            return Err(Diagnostic::error(format!("`{type_name}` does not support import")).into());
        }
        let (prefix, b64) = id.split_once(',').unwrap_or(("", id));
        let bytes = URL_SAFE_NO_PAD.decode(b64).map_err(|e| {
            Diagnostic::error("Cannot import random_id").detail(format!("{b64:?} is not URL-safe base64: {e}"))
        })?;
        let mut state = Value::object([
            ("byte_length", Value::from(bytes.len() as i64)),
            ("keepers", Value::Null),
            ("prefix", if prefix.is_empty() { Value::Null } else { Value::from(prefix) }),
        ]);
        for (name, text) in id_outputs(&bytes, prefix) {
            state.set_attr(name, text);
        }
        Ok(state)
    }
}

/// `number` and `numeric` (hashicorp/random's old and new names of one
/// switch) planned alike, as hashicorp/random's plan modifier plans them:
/// one configured gives its value to the other, neither means both true
/// (after `numeric`'s default), both configured must agree.
fn number_and_numeric(resp: PlanResponse, config: &Value) -> Result<PlanResponse, Diagnostic> {
    let (number, numeric) = (config.get_attr("number").clone(), config.get_attr("numeric").clone());
    if !number.is_null() && !numeric.is_null() && number.is_known() && numeric.is_known() && number != numeric {
        return Err(Diagnostic::error("`number` and `numeric` are both configured with different values")
            .detail("`number` is deprecated: configure `numeric` only.")
            .at(Path::attr("numeric")));
    }
    let resp = match number.is_null() {
        false => resp.set("numeric", number),
        true => resp,
    };
    Ok(resp.default("number", if numeric.is_null() { Value::from(true) } else { numeric }))
}

/// The arguments of a `random_password` or `random_string` stored at an
/// older schema version, as hashicorp/random's state upgrades set them:
/// those an import with hashicorp/random 3.3.1 or earlier left null get
/// their defaults (`length` that of `result`, in bytes as Go counts it;
/// the classes true; the minimums 0), and `number` and `numeric` one value,
/// `number`'s where it is stored (hashicorp's versions before 2 have
/// `number` only, an earlier cairn's `numeric` only), else true.
fn upgrade_characters(fields: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value as Json;
    let unset = |fields: &serde_json::Map<String, Json>, name: &str| fields.get(name).is_none_or(Json::is_null);
    if unset(fields, "length") {
        let length = fields.get("result").and_then(Json::as_str).map_or(0, str::len);
        fields.insert("length".into(), Json::from(length));
    }
    for min in ["min_numeric", "min_upper", "min_lower", "min_special"] {
        if unset(fields, min) {
            fields.insert(min.into(), Json::from(0));
        }
    }
    for switch in ["special", "upper", "lower"] {
        if unset(fields, switch) {
            fields.insert(switch.into(), Json::from(true));
        }
    }
    let stored = |name: &str| fields.get(name).and_then(Json::as_bool);
    let number = stored("number").or(stored("numeric")).unwrap_or(true);
    fields.insert("number".into(), Json::from(number));
    fields.insert("numeric".into(), Json::from(number));
}

/// The `bcrypt_hash` of a `random_password` stored at schema `version`,
/// as hashicorp/random's upgrades give it: version 0 had none, and gets
/// the hash of its `result`; version 1's is kept as it is; version 2's is
/// kept if it is the hash of the `result`, and made again if not (some
/// hashicorp/random releases stored a wrong one). A state without one (an
/// earlier cairn's version 0) gets one too.
fn upgrade_bcrypt_hash(
    fields: &mut serde_json::Map<String, serde_json::Value>,
    version: u64,
) -> Result<(), Diagnostic> {
    let Some(result) = fields.get("result").and_then(serde_json::Value::as_str).map(str::to_owned) else {
        return Err(Diagnostic::error("Cannot upgrade `random_password` state: it has no `result`")
            .detail("Its bcrypt_hash is made from the stored result."));
    };
    let stored = fields.get("bcrypt_hash").and_then(serde_json::Value::as_str);
    let kept = match (version, stored) {
        (0, _) | (_, None) => false,
        (1, Some(_)) => true,
        (_, Some(hash)) => bcrypt::verify(&result, hash).unwrap_or(false),
    };
    if !kept {
        fields.insert("bcrypt_hash".into(), serde_json::Value::from(upgraded_bcrypt_hash(&result)?));
    }
    Ok(())
}

/// The computed attributes of a `random_id`, as Terraform spells them.
fn id_outputs(bytes: &[u8], prefix: &str) -> [(&'static str, String); 5] {
    let url = URL_SAFE_NO_PAD.encode(bytes);
    [
        ("hex", format!("{prefix}{}", hex::encode(bytes))),
        ("b64_url", format!("{prefix}{url}")),
        ("b64_std", format!("{prefix}{}", STANDARD.encode(bytes))),
        ("dec", format!("{prefix}{}", big_endian_decimal(bytes))),
        ("id", url),
    ]
}

/// The bytes read as one unsigned big-endian number, in decimal.
///
/// Schoolbook conversion over base-10^9 limbs (least significant first):
/// for each byte, limbs = limbs * 256 + byte.
fn big_endian_decimal(bytes: &[u8]) -> String {
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = Vec::new();
    for &byte in bytes {
        let mut carry = u64::from(byte);
        for limb in &mut limbs {
            let v = *limb * 256 + carry;
            *limb = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }
    let Some((top, rest)) = limbs.split_last() else { return "0".to_owned() };
    let mut out = top.to_string();
    for limb in rest.iter().rev() {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

/// A uniformly random index below `n` (rejection sampling: no modulo bias).
fn below(n: usize) -> Result<usize, Diagnostic> {
    let n = n as u32;
    let zone = u32::MAX - u32::MAX % n;
    loop {
        let r = random::u32()?;
        if r < zone {
            return Ok((r % n) as usize);
        }
    }
}

/// Where the random numbers of `random_integer` and `random_shuffle` come
/// from: the host, or, with a `seed`, a generator (SplitMix64) started from
/// the seed's FNV-1a hash, so that a seed always gives the same result.
enum Draw {
    Host,
    Seeded(u64),
}

impl Draw {
    fn new(seed: Option<&str>) -> Draw {
        match seed {
            None => Draw::Host,
            Some(seed) => Draw::Seeded(
                seed.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)),
            ),
        }
    }

    fn next_u64(&mut self) -> Result<u64, Diagnostic> {
        match self {
            Draw::Host => random::u64(),
            Draw::Seeded(state) => {
                *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                Ok(z ^ (z >> 31))
            }
        }
    }

    /// A uniformly random number below `n` (rejection sampling: no modulo bias).
    fn below(&mut self, n: u64) -> Result<u64, Diagnostic> {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let r = self.next_u64()?;
            if r < zone {
                return Ok(r % n);
            }
        }
    }
}

/// A `random_integer` result from its (fully known) planned state.
fn integer(state: &Value) -> Result<i64, Diagnostic> {
    let (min, max) = (state.get_attr("min").as_i64().unwrap_or(0), state.get_attr("max").as_i64().unwrap_or(0));
    if min > max {
        return Err(Diagnostic::error("Minimum value needs to be smaller than or equal to maximum value"));
    }
    let span = max.abs_diff(min).checked_add(1);
    let mut draw = Draw::new(state.get_attr("seed").as_str());
    Ok(match span {
        Some(span) => min.wrapping_add_unsigned(draw.below(span)?),
        // The whole range of i64: any number will do.
        None => draw.next_u64()? as i64,
    })
}

/// A `random_shuffle` result: Fisher–Yates over `input`, cut to `result_count`.
fn shuffle(state: &Value) -> Result<Vec<Value>, Diagnostic> {
    let mut items: Vec<Value> = state.get_attr("input").as_slice().unwrap_or_default().to_vec();
    let mut draw = Draw::new(state.get_attr("seed").as_str());
    for i in (1..items.len()).rev() {
        let j = draw.below(i as u64 + 1)? as usize;
        items.swap(i, j);
    }
    if let Some(count) = state.get_attr("result_count").as_i64() {
        items.truncate(usize::try_from(count).unwrap_or(0));
    }
    Ok(items)
}

/// A ceiling on a `random_pet`'s words.
const MAX_PET_WORDS: i64 = 64;

/// Words of `random_pet` names (short, plain and kind, as Terraform's).
const ADVERBS: &[&str] = &[
    "abnormally",
    "actually",
    "adequately",
    "amazingly",
    "badly",
    "barely",
    "boldly",
    "briefly",
    "brightly",
    "busily",
    "calmly",
    "carefully",
    "certainly",
    "cheaply",
    "clearly",
    "closely",
    "correctly",
    "curiously",
    "deeply",
    "early",
    "easily",
    "eagerly",
    "equally",
    "evenly",
    "exactly",
    "fairly",
    "firmly",
    "freely",
    "gently",
    "gladly",
    "greatly",
    "happily",
    "highly",
    "honestly",
    "hugely",
    "ideally",
    "kindly",
    "largely",
    "lightly",
    "likely",
    "loudly",
    "lovely",
    "mainly",
    "merely",
    "mildly",
    "mostly",
    "namely",
    "nearly",
    "neatly",
    "newly",
    "nicely",
    "openly",
    "partly",
    "poorly",
    "quickly",
    "quietly",
    "rapidly",
    "rarely",
    "really",
    "safely",
    "sharply",
    "simply",
    "slowly",
    "smoothly",
    "solely",
    "surely",
    "swiftly",
    "truly",
    "vastly",
    "warmly",
    "weekly",
    "widely",
    "wildly",
    "wisely",
];
const ADJECTIVES: &[&str] = &[
    "able", "active", "adapted", "alert", "amazed", "awake", "balanced", "big", "brave", "bright", "busy", "calm",
    "capable", "careful", "charming", "cheerful", "clean", "clever", "close", "cool", "cosmic", "crisp", "curious",
    "daring", "dear", "decent", "eager", "easy", "enabled", "epic", "equal", "exact", "fair", "famous", "fast", "fine",
    "firm", "fit", "fluent", "free", "fresh", "funny", "gentle", "giving", "glad", "golden", "good", "grand", "happy",
    "helpful", "honest", "humble", "ideal", "inviting", "jolly", "just", "keen", "kind", "large", "lasting", "light",
    "live", "loved", "loyal", "lucky", "merry", "mint", "modest", "moved", "musical", "native", "neat", "nice",
    "noble", "open", "optimal", "patient", "peaceful", "perfect", "pleasant", "polite", "precious", "present",
    "proper", "proud", "quick", "quiet", "rapid", "ready", "real", "relaxed", "renewed", "rich", "robust", "sacred",
    "safe", "secure", "sharp", "shining", "smart", "smooth", "social", "solid", "sound", "special", "stable", "steady",
    "strong", "sunny", "super", "sure", "sweet", "swift", "tender", "tidy", "touched", "true", "trusty", "up",
    "valued", "vast", "vital", "warm", "whole", "wise", "witty", "worthy",
];
const ANIMALS: &[&str] = &[
    "alpaca", "ant", "antelope", "badger", "bat", "bear", "beaver", "bee", "beetle", "bison", "boar", "buck",
    "buffalo", "bull", "camel", "cat", "cattle", "chamois", "cheetah", "chicken", "chimp", "cicada", "civet", "cobra",
    "cod", "colt", "condor", "cougar", "cow", "coyote", "crab", "crane", "cricket", "crow", "deer", "dingo", "dodo",
    "dog", "dolphin", "donkey", "dove", "dragon", "duck", "eagle", "eel", "egret", "elk", "emu", "falcon", "ferret",
    "finch", "fish", "flamingo", "fly", "fox", "frog", "gazelle", "gecko", "gibbon", "giraffe", "gnat", "gnu", "goat",
    "goose", "gopher", "gorilla", "grouse", "gull", "hamster", "hare", "hawk", "hen", "heron", "hog", "horse", "hound",
    "husky", "ibex", "iguana", "impala", "jackal", "jaguar", "jay", "kid", "kingfish", "kit", "kite", "kiwi", "koala",
    "krill", "lamb", "lark", "lemming", "lemur", "leopard", "lion", "lizard", "llama", "lobster", "loon", "lynx",
    "macaw", "magpie", "mako", "mallard", "mammoth", "mantis", "marlin", "marmot", "marten", "mastiff", "mayfly",
    "mink", "mole", "mollusk", "monkey", "moose", "moth", "mouse", "mule", "mustang", "newt", "ocelot", "octopus",
    "orca", "oriole", "osprey", "ostrich", "otter", "owl", "ox", "oyster", "panda", "panther", "parrot", "peacock",
    "pelican", "penguin", "pheasant", "pig", "pigeon", "pika", "polecat", "pony", "poodle", "porpoise", "possum",
    "prawn", "puma", "pup", "python", "quail", "rabbit", "raccoon", "ram", "rat", "raven", "reindeer", "rhino",
    "robin", "rooster", "salmon", "seal", "shark", "sheep", "shrew", "shrimp", "skink", "skunk", "sloth", "slug",
    "snail", "snake", "snipe", "sparrow", "spider", "squid", "stag", "starling", "stork", "sturgeon", "swan", "swift",
    "tahr", "tapir", "teal", "termite", "tern", "tetra", "tiger", "toad", "tortoise", "toucan", "trout", "tuna",
    "turkey", "turtle", "unicorn", "urchin", "viper", "vulture", "wahoo", "walrus", "warthog", "wasp", "weasel",
    "whale", "whippet", "wolf", "wombat", "wren", "yak", "zebra",
];

/// A `random_pet` name from its (fully known) planned state: `length - 2`
/// adverbs, an adjective and an animal (just an animal for length 1).
fn pet_name(state: &Value) -> Result<String, Diagnostic> {
    let length = state.get_attr("length").as_i64().unwrap_or(2).clamp(1, MAX_PET_WORDS) as usize;
    let separator = state.get_attr("separator").as_str().unwrap_or("-");
    let mut words: Vec<&str> = state.get_attr("prefix").as_str().into_iter().collect();
    for position in 0..length {
        let list = match length - position {
            1 => ANIMALS,
            2 => ADJECTIVES,
            _ => ADVERBS,
        };
        words.push(list[below(list.len())?]);
    }
    Ok(words.join(separator))
}

/// The ephemeral `random_password`: the resource's arguments but
/// `keepers` (nothing is kept to replace), a sensitive `result`.
fn ephemeral_password() -> Schema {
    let mut schema = Schema::new(0)
        .description("A random password drawn anew in every run and never stored (sensitive).")
        .attribute("length", Attr::number().required().description("Number of characters."))
        .attribute("override_special", Attr::string().optional().description("Special characters to use instead."))
        .attribute("result", Attr::string().computed().sensitive().description("The password."))
        .attribute("bcrypt_hash", bcrypt_hash_attr());
    for (switch, min, _) in CLASSES {
        schema = schema
            .attribute(switch, Attr::bool().optional().computed().description("Use this class; default true."))
            .attribute(min, Attr::number().optional().computed().description("At least this many; default 0."));
    }
    schema
}

/// `bcrypt_hash` of a `random_password`, the resource's and the ephemeral one's.
fn bcrypt_hash_attr() -> Attr {
    Attr::string()
        .computed()
        .sensitive()
        .description("A bcrypt hash of `result` (of its first 72 bytes when it is longer).")
}

/// The bcrypt hash hashicorp/random stores: Go's `$2a$` form at cost 10,
/// of the password's first 72 bytes (bcrypt reads no more; hashicorp/random
/// cuts longer passwords rather than failing), with a salt from WASI `random`.
fn bcrypt_hash(password: &str) -> Result<String, Diagnostic> {
    bcrypt::hash_with_result(password, BCRYPT_COST)
        .map(|hash| hash.format_for_version(bcrypt::Version::TwoA))
        .map_err(|e| Diagnostic::error("Cannot compute the password's bcrypt_hash").detail(e.to_string()))
}

/// The `bcrypt_hash` an older state gets when it is read. Until an apply
/// writes the upgraded object, every plan upgrades it again (a saved plan
/// and its apply among them), so the salt is derived from the password
/// (SHA-256 of it, cut to bcrypt's 16 bytes): every run gets the same hash
/// and a reference to it does not change from plan to apply. Random
/// passwords differ, and so do their salts.
fn upgraded_bcrypt_hash(password: &str) -> Result<String, Diagnostic> {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(password.as_bytes());
    let mut salt = [0u8; 16];
    salt.copy_from_slice(&digest[..16]);
    bcrypt::hash_with_salt(password, BCRYPT_COST, salt)
        .map(|hash| hash.format_for_version(bcrypt::Version::TwoA))
        .map_err(|e| Diagnostic::error("Cannot compute the password's bcrypt_hash").detail(e.to_string()))
}

/// Generate a `random_password` result from its (fully known) planned state.
fn password(state: &Value) -> Result<String, Diagnostic> {
    let length = state.get_attr("length").as_i64().unwrap_or(0).clamp(1, MAX_PASSWORD_LENGTH) as usize;
    let special = state.get_attr("override_special").as_str().unwrap_or(SPECIAL);
    let mut all: Vec<char> = Vec::new();
    let mut chars: Vec<char> = Vec::new();
    for (switch, min, set) in CLASSES {
        if state.get_attr(switch).as_bool() == Some(false) {
            continue;
        }
        let set: Vec<char> = if switch == "special" { special.chars().collect() } else { set.chars().collect() };
        for _ in 0..state.get_attr(min).as_i64().unwrap_or(0) {
            if !set.is_empty() {
                chars.push(set[below(set.len())?]);
            }
        }
        all.extend(set);
    }
    if all.is_empty() {
        return Err(Diagnostic::error("No characters to choose from")
            .detail("Enable at least one of upper, lower, numeric and special (with a non-empty override_special)."));
    }
    if chars.len() > length {
        return Err(Diagnostic::error("The minimums add up to more than `length`").at(Path::attr("length")));
    }
    while chars.len() < length {
        chars.push(all[below(all.len())?]);
    }
    // Shuffle (Fisher–Yates) so the required characters are not all first.
    for i in (1..chars.len()).rev() {
        chars.swap(i, below(i + 1)?);
    }
    Ok(chars.into_iter().collect())
}

cairn_sdk::export_provider!(Random, name = "random");
cairn_sdk::export_ephemeral_resources!(Random);

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(type_name: &str, prior: Value, config: Value) -> PlanResponse {
        let schema = Random::schema().resource_schema(type_name).unwrap().clone();
        Random.plan(PlanRequest::proposed(type_name, schema, prior, config)).unwrap()
    }

    fn create(type_name: &str, config: Value) -> Value {
        let planned = plan(type_name, Value::Null, config.clone()).planned_state;
        let req = ApplyRequest {
            type_name: type_name.into(),
            schema: Random::schema().resource_schema(type_name).unwrap().clone().into(),
            prior_state: Value::Null,
            planned_state: planned,
            config,
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        let state = Random.apply(req).unwrap().new_state;
        assert!(state.is_known(), "{state:?}");
        state
    }

    #[test]
    fn schema_is_well_formed() {
        Random::schema().check().unwrap();
    }

    #[test]
    fn unknown_results_are_promised_not_null_and_prefixed() {
        let config = Value::object([("byte_length", Value::from(4)), ("prefix", Value::from("app-"))]);
        let planned = plan("random_id", Value::Null, config.clone()).planned_state;
        let hex = planned.get_attr("hex").refinements().cloned().expect("hex is a refined unknown");
        assert!(hex.not_null);
        assert_eq!(hex.prefix.as_deref(), Some("app-"));
        let id = planned.get_attr("id").refinements().cloned().expect("id is a refined unknown");
        assert!(id.not_null && id.prefix.is_none());
        // Apply keeps the promise.
        assert!(create("random_id", config).get_attr("hex").as_str().unwrap().starts_with("app-"));
    }

    #[test]
    fn decimal_conversion_handles_any_length() {
        assert_eq!(big_endian_decimal(&[]), "0");
        assert_eq!(big_endian_decimal(&[0, 0]), "0");
        assert_eq!(big_endian_decimal(&[1, 0]), "256");
        assert_eq!(big_endian_decimal(&[0x3b, 0x9a, 0xca, 0x00]), "1000000000");
        assert_eq!(big_endian_decimal(&[0xff; 8]), u64::MAX.to_string());
        assert_eq!(big_endian_decimal(&[0xff; 16]), u128::MAX.to_string());
        // 2^256 - 1
        assert_eq!(
            big_endian_decimal(&[0xff; 32]),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935"
        );
    }

    #[test]
    fn id_outputs_match_terraform() {
        let out = id_outputs(&[0xfb, 0xff, 0x01], "p-");
        let get = |n: &str| out.iter().find(|(k, _)| *k == n).unwrap().1.as_str();
        assert_eq!(get("hex"), "p-fbff01");
        assert_eq!(get("b64_url"), "p--_8B");
        assert_eq!(get("b64_std"), "p-+/8B");
        assert_eq!(get("dec"), "p-16514817");
        assert_eq!(get("id"), "-_8B");
    }

    #[test]
    fn random_id_is_unknown_at_plan_and_kept_on_no_op() {
        let config =
            Value::object([("byte_length", Value::from(8)), ("keepers", Value::Null), ("prefix", Value::Null)]);
        let planned = plan("random_id", Value::Null, config.clone()).planned_state;
        assert!(planned.get_attr("hex").is_unknown() && planned.get_attr("id").is_unknown());
        let state = create("random_id", config.clone());
        assert_eq!(state.get_attr("hex").as_str().unwrap().len(), 16);
        assert_eq!(plan("random_id", state.clone(), config.clone()).planned_state, state);
        // New keepers: a new id.
        let mut rekeyed = config;
        rekeyed.set_attr("keepers", Value::map([("k", "v")]));
        let p = plan("random_id", state, rekeyed);
        assert!(p.requires_replace.contains(&Path::attr("keepers")));
        assert!(p.planned_state.get_attr("dec").is_unknown());
    }

    #[test]
    fn passwords_respect_classes_and_minimums() {
        let config = Value::object([
            ("length", Value::from(24)),
            ("lower", Value::from(false)),
            ("upper", Value::from(false)),
            ("min_numeric", Value::from(20)),
            ("override_special", Value::from("#")),
        ]);
        let state = create("random_password", config);
        let result = state.get_attr("result").as_str().unwrap();
        assert_eq!(result.len(), 24);
        assert!(result.chars().all(|c| c.is_ascii_digit() || c == '#'), "{result}");
        assert!(result.chars().filter(char::is_ascii_digit).count() >= 20);
        assert_eq!(state.get_attr("special").as_bool(), Some(true), "defaults are recorded");
        assert_eq!(state.get_attr("id").as_str(), Some("none"));
        assert!(Random::schema().resource_schema("random_password").unwrap().is_sensitive("result"));
    }

    /// Whether `hash` is hashicorp/random's form of a bcrypt hash of `password`.
    fn is_bcrypt_of(hash: &Value, password: &str) -> bool {
        let hash = hash.as_str().expect("bcrypt_hash is set");
        hash.starts_with("$2a$10$") && bcrypt::verify(password, hash).unwrap()
    }

    #[test]
    fn a_password_has_the_bcrypt_hash_of_its_result() {
        let state = create("random_password", Value::object([("length", Value::from(20))]));
        let result = state.get_attr("result").as_str().unwrap();
        assert!(is_bcrypt_of(state.get_attr("bcrypt_hash"), result), "{state:?}");
        assert!(!bcrypt::verify(format!("{result}x"), state.get_attr("bcrypt_hash").as_str().unwrap()).unwrap());
        let schema = Random::schema();
        assert!(schema.resource_schema("random_password").unwrap().is_sensitive("bcrypt_hash"));
        assert!(schema.resource_schema("random_string").unwrap().block.attr("bcrypt_hash").is_none(), "not on strings");
        // The ephemeral password has one too.
        let opened = Random.open_ephemeral("random_password", Value::object([("length", Value::from(16))])).unwrap();
        let result = opened.result.get_attr("result").as_str().unwrap();
        assert!(is_bcrypt_of(opened.result.get_attr("bcrypt_hash"), result));
        assert!(schema.ephemeral_resource_schema("random_password").unwrap().is_sensitive("bcrypt_hash"));
    }

    #[test]
    fn a_long_password_is_hashed_on_its_first_72_bytes_as_hashicorp_random_does() {
        let state = create("random_password", Value::object([("length", Value::from(100))]));
        let result = state.get_attr("result").as_str().unwrap();
        assert!(is_bcrypt_of(state.get_attr("bcrypt_hash"), &result[..72]));
    }

    #[test]
    fn a_version_0_password_state_gets_a_bcrypt_hash_and_keeps_its_password() {
        let raw = r#"{"id":"none","length":12,"keepers":null,"override_special":null,"result":"s3cret-Pass!",
            "upper":true,"min_upper":0,"lower":true,"min_lower":0,"numeric":true,"min_numeric":0,
            "special":true,"min_special":0}"#;
        let upgraded = Random.upgrade_state("random_password", 0, raw).unwrap();
        assert_eq!(upgraded.get_attr("result").as_str(), Some("s3cret-Pass!"));
        assert!(is_bcrypt_of(upgraded.get_attr("bcrypt_hash"), "s3cret-Pass!"));
        let again = Random.upgrade_state("random_password", 0, raw).unwrap();
        assert_eq!(again.get_attr("bcrypt_hash"), upgraded.get_attr("bcrypt_hash"), "the same in every run");
        // Planned from the upgraded state with the same configuration: kept
        // as it is, no new password.
        let mut config = Value::object([("length", Value::from(12))]);
        for attr in ["keepers", "override_special", "upper", "min_upper", "lower", "min_lower"] {
            config.set_attr(attr, Value::Null);
        }
        for attr in ["numeric", "min_numeric", "special", "min_special"] {
            config.set_attr(attr, Value::Null);
        }
        config.set_attr("number", Value::Null);
        let planned = plan("random_password", upgraded.clone(), config);
        assert_eq!(planned.planned_state, upgraded);
        assert!(planned.requires_replace.iter().all(|p| p != &Path::attr("result")));
        // A newer version than the provider's is refused.
        assert!(Random.upgrade_state("random_password", 4, raw).is_err());
        assert!(Random.upgrade_state("random_id", 1, raw).is_err());
    }

    /// hashicorp/random's own states of a password, as Terraform stores
    /// them at each schema version: `number` only before 2, and at 2 a
    /// hash that may not be the password's.
    #[test]
    fn hashicorp_random_password_states_of_every_version_are_upgraded_as_it_upgrades_them() {
        let hash = bcrypt_hash("pw").unwrap();
        let v0 = r#"{"id":"none","keepers":null,"length":2,"lower":true,"min_lower":0,"min_numeric":0,
            "min_special":0,"min_upper":0,"number":false,"override_special":"","result":"pw","special":true,
            "upper":true}"#;
        let v1 = v0.replace(r#""id":"none""#, &format!(r#""bcrypt_hash":"{hash}","id":"none""#));
        let v2 = v1.replace(r#""number":false"#, r#""number":false,"numeric":false"#);
        let wrong = v2.replace(&hash, &bcrypt_hash("other").unwrap());
        for (version, raw) in [(0, v0.to_string()), (1, v1.clone()), (2, v2.clone()), (2, wrong)] {
            let upgraded = Random.upgrade_state("random_password", version, &raw).unwrap();
            assert_eq!(upgraded.get_attr("result").as_str(), Some("pw"), "{version}");
            assert_eq!(upgraded.get_attr("number").as_bool(), Some(false), "{version}");
            assert_eq!(upgraded.get_attr("numeric").as_bool(), Some(false), "{version}: numeric takes number's value");
            assert!(is_bcrypt_of(upgraded.get_attr("bcrypt_hash"), "pw"), "{version}: {raw}");
        }
        let kept = Random.upgrade_state("random_password", 2, &v2).unwrap();
        assert_eq!(kept.get_attr("bcrypt_hash").as_str(), Some(hash.as_str()), "a right hash is kept");
        // What an import with 3.3.1 and earlier left null gets its default.
        let imported = r#"{"id":"none","result":"abc","bcrypt_hash":null}"#;
        let upgraded = Random.upgrade_state("random_password", 1, imported).unwrap();
        assert_eq!(upgraded.get_attr("length").as_i64(), Some(3));
        assert_eq!(upgraded.get_attr("upper").as_bool(), Some(true));
        assert_eq!(upgraded.get_attr("min_special").as_i64(), Some(0));
        assert_eq!(upgraded.get_attr("numeric").as_bool(), Some(true));
        // The current version is read as it is.
        let v3 = v2.replace(r#""number":false,"numeric":false"#, r#""number":true,"numeric":true"#);
        assert_eq!(
            Random.upgrade_state("random_password", 3, &v3).unwrap().get_attr("bcrypt_hash").as_str(),
            Some(hash.as_str())
        );
    }

    #[test]
    fn random_string_states_of_earlier_versions_get_number_and_numeric() {
        // hashicorp/random's version 1 (number only), and an earlier
        // cairn's version 0 (numeric only).
        let hashicorp = r#"{"id":"ab","keepers":null,"length":2,"lower":true,"min_lower":0,"min_numeric":0,
            "min_special":0,"min_upper":0,"number":false,"override_special":null,"result":"ab","special":false,
            "upper":true}"#;
        let cairn = hashicorp.replace(r#""number":false"#, r#""numeric":false"#);
        for (version, raw) in [(1, hashicorp), (0, cairn.as_str())] {
            let upgraded = Random.upgrade_state("random_string", version, raw).unwrap();
            assert_eq!(upgraded.get_attr("result").as_str(), Some("ab"));
            assert_eq!(upgraded.get_attr("number").as_bool(), Some(false), "{version}");
            assert_eq!(upgraded.get_attr("numeric").as_bool(), Some(false), "{version}");
        }
    }

    #[test]
    fn an_empty_override_special_left_unset_is_updated_not_replaced() {
        let mut prior = create("random_string", Value::object([("length", Value::from(4))]));
        prior.set_attr("override_special", "");
        let planned = plan("random_string", prior.clone(), Value::object([("length", Value::from(4))]));
        assert!(planned.planned_state.get_attr("override_special").is_null());
        assert!(!planned.requires_replace.contains(&Path::attr("override_special")), "{:?}", planned.requires_replace);
        assert_eq!(planned.planned_state.get_attr("result"), prior.get_attr("result"));
    }

    #[test]
    fn number_and_numeric_plan_alike() {
        let planned = |config: Value| plan("random_string", Value::Null, config).planned_state;
        let length = ("length", Value::from(4));
        let neither = planned(Value::object([length.clone()]));
        assert_eq!(
            (neither.get_attr("number").as_bool(), neither.get_attr("numeric").as_bool()),
            (Some(true), Some(true))
        );
        let number = planned(Value::object([length.clone(), ("number", Value::from(false))]));
        assert_eq!(
            (number.get_attr("number").as_bool(), number.get_attr("numeric").as_bool()),
            (Some(false), Some(false))
        );
        let numeric = planned(Value::object([length.clone(), ("numeric", Value::from(false))]));
        assert_eq!(
            (numeric.get_attr("number").as_bool(), numeric.get_attr("numeric").as_bool()),
            (Some(false), Some(false))
        );
        let schema = Random::schema().resource_schema("random_string").unwrap().clone();
        let both = Value::object([length, ("number", Value::from(true)), ("numeric", Value::from(false))]);
        assert!(Random.plan(PlanRequest::proposed("random_string", schema, Value::Null, both)).is_err());
    }

    #[test]
    fn an_ephemeral_password_fills_the_defaults_and_keeps_the_configuration() {
        let config = Value::object([("length", Value::from(16)), ("special", Value::from(false))]);
        let opened = Random.open_ephemeral("random_password", config).unwrap();
        let result = opened.result.get_attr("result").as_str().unwrap().to_owned();
        assert_eq!(result.len(), 16);
        assert!(result.chars().all(|c| c.is_ascii_alphanumeric()), "{result}");
        assert_eq!(opened.result.get_attr("special").as_bool(), Some(false), "configured values are kept");
        assert_eq!(opened.result.get_attr("upper").as_bool(), Some(true), "defaults are filled in");
        assert_eq!(opened.result.get_attr("min_lower").as_i64(), Some(0));
        assert!(opened.private.is_empty() && opened.renew_at.is_none(), "nothing to renew or close");
        let schema = Random::schema();
        assert!(schema.ephemeral_resource_schema("random_password").unwrap().is_sensitive("result"));
        let again = Random.open_ephemeral("random_password", Value::object([("length", Value::from(16))])).unwrap();
        assert_ne!(again.result.get_attr("result").as_str(), Some(result.as_str()), "a new password each time");
    }

    #[test]
    fn an_ephemeral_password_refuses_other_types_and_bad_lengths() {
        assert!(Random.open_ephemeral("random_string", Value::object([("length", Value::from(3))])).is_err());
        let zero = Value::object([("length", Value::from(0))]);
        assert!(!Random.validate_ephemeral("random_password", &zero).is_empty());
    }

    #[test]
    fn a_random_string_is_a_password_in_the_open() {
        let config = Value::object([("length", Value::from(12)), ("special", Value::from(false))]);
        let state = create("random_string", config);
        let result = state.get_attr("result").as_str().unwrap();
        assert_eq!(result.len(), 12);
        assert!(result.chars().all(|c| c.is_ascii_alphanumeric()), "{result}");
        assert_eq!(state.get_attr("id").as_str(), Some(result), "its id is the string, as Terraform's");
        assert!(!Random::schema().resource_schema("random_string").unwrap().is_sensitive("result"));
    }

    #[test]
    fn a_random_pet_is_adverbs_an_adjective_and_an_animal() {
        let state = create("random_pet", Value::object([("length", Value::Null)]));
        let id = state.get_attr("id").as_str().unwrap().to_string();
        let words: Vec<&str> = id.split('-').collect();
        assert_eq!(words.len(), 2, "two words by default: {id}");
        assert!(ADJECTIVES.contains(&words[0]) && ANIMALS.contains(&words[1]), "{id}");
        assert_eq!((state.get_attr("length").as_i64(), state.get_attr("separator").as_str()), (Some(2), Some("-")));

        let config = Value::object([
            ("length", Value::from(4)),
            ("separator", Value::from(".")),
            ("prefix", Value::from("dev")),
        ]);
        let id = create("random_pet", config).get_attr("id").as_str().unwrap().to_string();
        let words: Vec<&str> = id.split('.').collect();
        assert_eq!(words.len(), 5, "{id}");
        assert_eq!(words[0], "dev");
        assert!(ADVERBS.contains(&words[1]) && ADVERBS.contains(&words[2]), "{id}");
        assert!(ADJECTIVES.contains(&words[3]) && ANIMALS.contains(&words[4]), "{id}");
        assert!(
            Random.validate("random_pet", &Value::object([("length", Value::from(0))]))[0].summary.contains("length")
        );
    }

    #[test]
    fn impossible_passwords_and_lengths_are_errors() {
        let none = Value::object(CLASSES.map(|(switch, _, _)| (switch, Value::from(false))));
        assert!(password(&none.clone()).unwrap_err().summary.contains("No characters"));
        let mut too_many = none;
        too_many.set_attr("lower", true);
        too_many.set_attr("length", 2);
        too_many.set_attr("min_lower", 3);
        assert!(password(&too_many).is_err());
        let bad = Value::object([("byte_length", 0)]);
        assert_eq!(Random.validate("random_id", &bad).len(), 1);
        assert!(Random.validate("random_id", &Value::object([("byte_length", Value::unknown())])).is_empty());
    }

    #[test]
    fn import_rebuilds_a_random_id() {
        let state = Random.import("random_id", "p-,-_8B").unwrap();
        assert_eq!(state.get_attr("byte_length").as_i64(), Some(3));
        assert_eq!(state.get_attr("hex").as_str(), Some("p-fbff01"));
        assert!(Random.import("random_id", "!!").is_err());
    }

    #[test]
    fn a_random_integer_stays_in_range_and_a_seed_repeats_it() {
        for _ in 0..20 {
            let state = create("random_integer", Value::object([("min", Value::from(1)), ("max", Value::from(3))]));
            let n = state.get_attr("result").as_i64().unwrap();
            assert!((1..=3).contains(&n), "{n}");
            assert_eq!(state.get_attr("id").as_str(), Some(n.to_string().as_str()));
        }
        let seeded = || {
            let config =
                Value::object([("min", Value::from(1)), ("max", Value::from(1_000_000)), ("seed", Value::from("s"))]);
            create("random_integer", config).get_attr("result").as_i64()
        };
        assert_eq!(seeded(), seeded());
        let backwards = Value::object([("min", Value::from(5)), ("max", Value::from(1))]);
        assert!(Random.validate("random_integer", &backwards)[0].summary.contains("smaller than or equal"));
    }

    #[test]
    fn a_random_shuffle_is_a_permutation_cut_to_its_count() {
        let input = Value::list(["a", "b", "c", "d", "e"]);
        let state = create("random_shuffle", Value::object([("input", input.clone())]));
        let mut result: Vec<String> =
            state.get_attr("result").as_slice().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        result.sort();
        assert_eq!(result, ["a", "b", "c", "d", "e"]);
        assert_eq!(state.get_attr("id").as_str(), Some("-"));
        let two = create("random_shuffle", Value::object([("input", input.clone()), ("result_count", Value::from(2))]));
        assert_eq!(two.get_attr("result").as_slice().unwrap().len(), 2);
        let seeded = || {
            let config = Value::object([("input", input.clone()), ("seed", Value::from("x"))]);
            create("random_shuffle", config).get_attr("result").clone()
        };
        assert_eq!(seeded(), seeded());
    }

    #[test]
    fn a_random_uuid_is_version_4() {
        let state = create("random_uuid", Value::object([("keepers", Value::Null)]));
        let id = state.get_attr("result").as_str().unwrap().to_string();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4", "{id}");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_eq!(state.get_attr("id").as_str(), Some(id.as_str()));
    }
}
