//! Plan validity: a planned new state checked against the configuration and
//! the prior state (`PlanResponse` rules; Terraform's
//! `objchange.AssertPlanValid`, with no exemptions).

use super::{
    RULE_BLOCK_COUNT, RULE_BLOCK_KNOWN, RULE_CONFIG_PRESERVED, RULE_NESTED_COUNT, RULE_NOT_COMPUTED, Redactor,
    Violation, conform, finish, same, write_only_kept,
};
use crate::schema::{Attribute, Block, NestedBlock, NestedType, Nesting};
use crate::value::{Path, Value, quote};

/// Checks a planned state against config and prior state (`PlanResourceChange` rules):
/// - every value conforms to the schema type;
/// - a configured (non-null) attribute is planned exactly as configured, or
///   as its prior value; an unknown configured value may stay unknown or
///   become known;
/// - an attribute the configuration leaves null is planned null unless it is
///   computed; computed-only attributes may be planned freely;
/// - nested blocks keep the number (and, for maps, the keys) the
///   configuration has, a block is never unknown as a whole, and a
///   collection of no blocks is empty, not null; the blocks' contents obey
///   the same rules, recursively;
/// - a nested attribute type is an attribute as a whole (null, unknown,
///   computed as above) and, when configured and planned as something
///   else, keeps the configured objects (their number; for maps, their
///   keys; for sets, each planned object plans a configured one) whose
///   attributes obey these rules, recursively;
/// - a write-only attribute is planned null;
/// - a null configuration (delete) is planned null, and a configured
///   resource is not.
pub fn check_plan(schema: &Block, prior: &Value, config: &Value, planned: &Value) -> Vec<Violation> {
    check_plan_marked(schema, prior, config, planned, &[])
}

/// [`check_plan`], also redacting the values at or under the paths in
/// `sensitive` (for example configuration built from sensitive variables).
pub fn check_plan_marked(
    schema: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
    sensitive: &[Path],
) -> Vec<Violation> {
    let r = Redactor { schema, marks: sensitive };
    let types = conform::check(&r, &schema.implied_type(), planned);
    let mut plan = Plan { r: &r, out: Vec::new() };
    let root = Path::root();
    match (config, planned) {
        // A delete planned null, or an unknown configuration planned unknown.
        _ if same(planned, config) => {}
        (Value::Null, _) => plan.push(
            &root,
            RULE_CONFIG_PRESERVED,
            "planned an object for a resource the configuration no longer has".to_string(),
        ),
        (_, Value::Null) => {
            plan.push(&root, RULE_CONFIG_PRESERVED, "planned null for a resource that is configured".to_string())
        }
        (Value::Unknown(_), _) => {
            let message = format!("planned {} for a configuration not yet known", r.show(&root, planned));
            plan.push(&root, RULE_CONFIG_PRESERVED, message);
        }
        (_, Value::Unknown(_)) => plan.push(&root, RULE_BLOCK_KNOWN, "planned unknown as a whole".to_string()),
        _ => plan.contents(schema, prior, config, planned, &root),
    }
    write_only_kept(schema, planned, &root, &mut plan.out);
    finish(types, plan.out)
}

/// The walk over one plan, collecting violations.
struct Plan<'a> {
    r: &'a Redactor<'a>,
    out: Vec<Violation>,
}

impl Plan<'_> {
    fn push(&mut self, path: &Path, rule: &'static str, message: String) {
        self.out.push(Violation { path: path.clone(), message, rule });
    }

    /// Whether planning `planned` for `config` breaks no rule: a dry run,
    /// for correlating the elements of sets of blocks.
    fn fits(&self, block: &Block, prior: &Value, config: &Value, planned: &Value, path: &Path) -> bool {
        let mut dry = Plan { r: self.r, out: Vec::new() };
        dry.object(block, prior, config, planned, path);
        dry.out.is_empty()
    }

    /// One nested block: a single block, or one element of a collection
    /// of blocks.
    fn object(&mut self, block: &Block, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        if same(planned, config) {
            return;
        }
        let r = self.r;
        let shown = || r.show(path, planned);
        match (config, planned) {
            (Value::Unknown(_), _) => {
                let message = format!("planned {} for a block the configuration does not know yet", shown());
                self.push(path, RULE_BLOCK_COUNT, message);
            }
            (_, Value::Unknown(_)) => self.push(path, RULE_BLOCK_KNOWN, "planned unknown as a whole".to_string()),
            (Value::Null, _) => {
                let message = format!("planned the block {} that the configuration does not have", shown());
                self.push(path, RULE_BLOCK_COUNT, message);
            }
            (_, Value::Null) => {
                self.push(path, RULE_BLOCK_COUNT, "planned no block where the configuration has one".to_string())
            }
            _ => self.contents(block, prior, config, planned, path),
        }
    }

    /// The attributes and nested blocks of an object of `block`.
    fn contents(&mut self, block: &Block, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        // A planned value of the wrong shape: the type check reports it.
        let (Value::Object(_), Value::Object(_)) = (config, planned) else { return };
        // A prior of another shape (or none) has nothing to offer.
        let prior = if matches!(prior, Value::Object(_)) { prior } else { &Value::Null };
        for (name, attr) in &block.attributes {
            let (p, c, v) = (prior.get_attr(name), config.get_attr(name), planned.get_attr(name));
            self.attribute(attr, p, c, v, &path.attr(name));
        }
        for (name, nested) in &block.blocks {
            let (p, c, v) = (prior.get_attr(name), config.get_attr(name), planned.get_attr(name));
            self.nested(nested, p, c, v, &path.attr(name));
        }
    }

    fn attribute(&mut self, attr: &Attribute, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        // A write-only attribute must be planned null, whatever the
        // configuration says; `write_only_kept` reports anything else.
        if attr.write_only || same(planned, config) {
            return;
        }
        // The provider may keep the prior value of a configured attribute,
        // to say the new configuration means the same (e.g. JSON that
        // differs only in whitespace).
        if same(planned, prior) && !prior.is_null() && !config.is_null() {
            return;
        }
        // A configured value not known yet may be planned unknown or as a
        // known value the provider can already predict (issue #3); the
        // re-plan at apply time then holds the provider to it, since the
        // second plan must keep both the configuration and the first plan.
        if config.is_unknown() {
            return;
        }
        // A computed-only attribute is the provider's to plan, and so is an
        // optional+computed one the configuration leaves null (a default).
        if attr.computed && (!attr.optional || config.is_null()) {
            return;
        }
        let show = |v: &Value| self.r.show(path, v);
        if config.is_null() {
            let message = format!(
                "planned value {} for a non-computed attribute that the configuration leaves null",
                show(planned)
            );
            return self.push(path, RULE_NOT_COMPUTED, message);
        }
        if let Some(nested) = &attr.nested
            && !planned.is_null()
            && !planned.is_unknown()
        {
            return self.nested_attribute(nested, prior, config, planned, path);
        }
        let mut message = format!("planned value {} does not match config value {}", show(planned), show(config));
        if !prior.is_null() {
            message.push_str(&format!(" nor prior value {}", show(prior)));
        }
        self.push(path, RULE_CONFIG_PRESERVED, message);
    }

    /// A configured nested attribute planned as a known value other than
    /// its configuration: the objects must be the configured ones, each
    /// planned by the attribute rules (Terraform's
    /// `assertPlannedObjectValid`).
    fn nested_attribute(&mut self, nested: &NestedType, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        let block = &nested.block;
        let objects = |n: usize| format!("{n} object(s)");
        match (nested.nesting, config, planned) {
            (Nesting::Single, Value::Object(_), Value::Object(_)) => self.contents(block, prior, config, planned, path),
            (Nesting::List, Value::List(c), Value::List(p)) => {
                if c.len() != p.len() {
                    let message =
                        format!("planned {} where the configuration has {}", objects(p.len()), objects(c.len()));
                    return self.push(path, RULE_NESTED_COUNT, message);
                }
                let priors = match prior {
                    Value::List(items) => items.as_slice(),
                    _ => &[],
                };
                for (i, (ce, pe)) in c.iter().zip(p).enumerate() {
                    self.nested_object(block, priors.get(i).unwrap_or(&Value::Null), ce, pe, &path.index(i));
                }
            }
            (Nesting::Map, Value::Map(c), Value::Map(p)) => {
                for k in p.keys().filter(|k| !c.contains_key(*k)) {
                    let message = format!("planned the key {} that the configuration does not have", quote(k));
                    self.push(&path.key(k), RULE_NESTED_COUNT, message);
                }
                for k in c.keys().filter(|k| !p.contains_key(*k)) {
                    let message = format!("planned no object for the configured key {}", quote(k));
                    self.push(&path.key(k), RULE_NESTED_COUNT, message);
                }
                for (k, ce) in c {
                    if let Some(pe) = p.get(k) {
                        self.nested_object(block, prior.get_attr(k), ce, pe, &path.key(k));
                    }
                }
            }
            (Nesting::Set, Value::Set(c), Value::Set(p)) => {
                if c.len() != p.len() {
                    let message =
                        format!("planned {} where the configuration has {}", objects(p.len()), objects(c.len()));
                    return self.push(path, RULE_NESTED_COUNT, message);
                }
                let priors = match prior {
                    Value::Set(items) => items.as_slice(),
                    _ => &[],
                };
                self.set_of_objects(block, priors, c, p, path, Objects::Nested);
            }
            // A value of the wrong shape: the type check reports it.
            _ => {}
        }
    }

    /// One object of a configured nested attribute.
    fn nested_object(&mut self, block: &Block, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        if same(planned, config) || config.is_unknown() {
            return;
        }
        match (config, planned) {
            (_, Value::Unknown(_)) => {
                self.push(path, RULE_CONFIG_PRESERVED, "planned unknown for a configured object".to_string())
            }
            (Value::Null, _) | (_, Value::Null) => {
                let shown = |v: &Value| self.r.show(path, v);
                let message = format!("planned {} where the configuration has {}", shown(planned), shown(config));
                self.push(path, RULE_CONFIG_PRESERVED, message);
            }
            _ => self.contents(block, prior, config, planned, path),
        }
    }

    fn nested(&mut self, nested: &NestedBlock, prior: &Value, config: &Value, planned: &Value, path: &Path) {
        if nested.nesting == Nesting::Single {
            return self.object(&nested.block, prior, config, planned, path);
        }
        if same(planned, config) {
            return;
        }
        let kind = match nested.nesting {
            Nesting::List => "list",
            Nesting::Set => "set",
            _ => "map",
        };
        let count = |v: &Value| match v {
            Value::Map(m) => m.len(),
            v => v.elements().map_or(0, <[Value]>::len),
        };
        if config.is_unknown() {
            let message =
                format!("planned {} for blocks the configuration does not know yet", self.r.show(path, planned));
            return self.push(path, RULE_BLOCK_COUNT, message);
        }
        if planned.is_unknown() {
            return self.push(path, RULE_BLOCK_KNOWN, "planned the blocks unknown as a whole".to_string());
        }
        if planned.is_null() {
            let message = format!(
                "planned null where the configuration has {} block(s); no blocks is an empty {kind}, not null",
                count(config)
            );
            return self.push(path, RULE_BLOCK_COUNT, message);
        }
        let block = &nested.block;
        match (nested.nesting, config, planned) {
            // A null configuration (which the host should not produce) is
            // taken as no blocks.
            (Nesting::List, Value::List(_) | Value::Null, Value::List(p)) => {
                let c = config.elements().unwrap_or(&[]);
                if c.len() != p.len() {
                    return self.count_mismatch(path, p.len(), c.len());
                }
                let priors = match prior {
                    Value::List(items) => items.as_slice(),
                    _ => &[],
                };
                for (i, (ce, pe)) in c.iter().zip(p).enumerate() {
                    self.object(block, priors.get(i).unwrap_or(&Value::Null), ce, pe, &path.index(i));
                }
            }
            (Nesting::Map, Value::Map(_) | Value::Null, Value::Map(p)) => {
                let empty = Default::default();
                let c = match config {
                    Value::Map(c) => c,
                    _ => &empty,
                };
                for k in p.keys().filter(|k| !c.contains_key(*k)) {
                    let message =
                        format!("planned a block with the key {} that the configuration does not have", quote(k));
                    self.push(&path.key(k), RULE_BLOCK_COUNT, message);
                }
                for k in c.keys().filter(|k| !p.contains_key(*k)) {
                    let message = format!("planned no block for the configured key {}", quote(k));
                    self.push(&path.key(k), RULE_BLOCK_COUNT, message);
                }
                for (k, ce) in c {
                    if let Some(pe) = p.get(k) {
                        self.object(block, prior.get_attr(k), ce, pe, &path.key(k));
                    }
                }
            }
            (Nesting::Set, Value::Set(_) | Value::Null, Value::Set(p)) => {
                let priors = match prior {
                    Value::Set(items) => items.as_slice(),
                    _ => &[],
                };
                self.set_of_objects(block, priors, config.elements().unwrap_or(&[]), p, path, Objects::Blocks);
            }
            // A value of the wrong shape: the type check reports it.
            _ => {}
        }
    }

    fn count_mismatch(&mut self, path: &Path, planned: usize, configured: usize) {
        let message = format!("planned {planned} block(s) where the configuration has {configured}");
        self.push(path, RULE_BLOCK_COUNT, message);
    }

    /// A set of blocks. Set elements have no identity but their content, so
    /// each planned block must be a valid plan of some configured block
    /// (with some prior block, or none, as its prior) and each configured
    /// block must be planned by some planned block. Two configured blocks
    /// that the plan makes equal (with a default, say) may coalesce into
    /// one, as set elements do; the plan may never have more blocks.
    fn set_of_objects(
        &mut self,
        block: &Block,
        priors: &[Value],
        config: &[Value],
        planned: &[Value],
        path: &Path,
        what: Objects,
    ) {
        let (noun, count_rule) = match what {
            Objects::Blocks => ("block", RULE_BLOCK_COUNT),
            Objects::Nested => ("object", RULE_NESTED_COUNT),
        };
        let unknown: Vec<usize> = (0..planned.len()).filter(|&i| planned[i].is_unknown()).collect();
        for &i in &unknown {
            let (rule, message) = match what {
                Objects::Blocks => (RULE_BLOCK_KNOWN, "planned a block unknown as a whole"),
                Objects::Nested => (RULE_CONFIG_PRESERVED, "planned unknown for a configured object"),
            };
            self.push(&path.index(i), rule, message.to_string());
        }
        if !unknown.is_empty() {
            return;
        }
        if planned.len() > config.len() {
            return self.count_mismatch(path, planned.len(), config.len());
        }
        let mut planned_ok = vec![false; planned.len()];
        let mut config_ok = vec![false; config.len()];
        // Usually a planned block is its configured block plus computed
        // values: pair them with no prior first. Prior blocks (for values
        // the provider kept from them) are tried only for the blocks left
        // over, which keeps large sets of blocks quadratic, not cubic.
        for (i, p) in planned.iter().enumerate() {
            for (j, c) in config.iter().enumerate() {
                if self.fits(block, &Value::Null, c, p, path) {
                    planned_ok[i] = true;
                    config_ok[j] = true;
                }
            }
        }
        let with_a_prior = |c: &Value, p: &Value| priors.iter().any(|prior| self.fits(block, prior, c, p, path));
        for (i, p) in planned.iter().enumerate() {
            for (j, c) in config.iter().enumerate() {
                if !(planned_ok[i] && config_ok[j]) && with_a_prior(c, p) {
                    planned_ok[i] = true;
                    config_ok[j] = true;
                }
            }
        }
        let stray: Vec<String> =
            (0..planned.len()).filter(|&i| !planned_ok[i]).map(|i| self.r.show(&path.index(i), &planned[i])).collect();
        for shown in &stray {
            let message = format!("planned the {noun} {shown}, which plans no configured {noun}");
            self.push(path, RULE_CONFIG_PRESERVED, message);
        }
        // A changed block also leaves its configured block unplanned; say
        // so only when there is nothing more specific.
        if stray.is_empty() {
            for (j, c) in config.iter().enumerate().filter(|(j, _)| !config_ok[*j]) {
                let message =
                    format!("the configured {noun} {} is missing from the plan", self.r.show(&path.index(j), c));
                self.push(path, count_rule, message);
            }
        }
    }
}

/// What a set of objects holds, for the words and rules of messages.
#[derive(Clone, Copy)]
enum Objects {
    /// Nested blocks.
    Blocks,
    /// The objects of a nested attribute type.
    Nested,
}
