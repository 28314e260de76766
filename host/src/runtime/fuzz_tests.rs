//! A fuzzer for the boundary where a provider's answer enters the host:
//! generated answers, in the very types wasmtime lifts out of a component
//! (the `bindgen!` types of `wit/`), go through the same code an answer
//! goes through (`answer::AnswerSize`, `pool::decode_answer`, the schema
//! decoder) and then the contract checks. Every one must end with a value
//! or an error: never a panic, a hang, or memory out of proportion.
//!
//! Generated: node graphs with indices in range, out of range, pointing at
//! themselves or back up (cycles); nodes shared by many references (wide
//! and as diamonds, which double at every level); deep chains; huge
//! strings; duplicate keys; non-finite floats; schemas whose types and
//! blocks are just as broken.
//!
//! `cargo test` runs a fixed number of cases per property
//! ([`DEFAULT_CASES`]); `CAIRN_FUZZ_CASES=100000 cargo test -p cairn --lib
//! fuzz_tests` runs more. A failure prints the smallest answer found.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::answer::AnswerSize;
use super::bindings::cairn::provider::types as wit;
use super::pool::decode_answer;
use super::wire;
use crate::contract;
use crate::schema::{Attribute, Block};
use crate::value::{Type, Value};

/// Cases per property in a plain `cargo test`.
const DEFAULT_CASES: u32 = 256;

/// The size budget answers are decoded within here: small, so that the
/// cases that pass it stay cheap, while the generator makes far bigger ones.
const MAX_BYTES: u64 = 4 << 20;

fn runner() -> TestRunner {
    let cases = std::env::var("CAIRN_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(DEFAULT_CASES);
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

/// A node index for a graph of `n` nodes: mostly in range, sometimes just
/// past it, sometimes the largest index there is.
fn index(n: u32) -> impl Strategy<Value = u32> + Clone {
    prop_oneof![8 => 0..n, 1 => n..n + 3, 1 => Just(u32::MAX)]
}

/// Keys from a tiny alphabet, so that duplicates are common.
fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![Just(String::new()), "[ab]{1,2}", "[a-z]{0,12}"]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => ".{0,16}",
        1 => (0usize..(8 << 20)).prop_map(|n| "x".repeat(n)),
    ]
}

fn node_kind(n: u32) -> impl Strategy<Value = wit::ValueNode> {
    let indexes = proptest::collection::vec(index(n), 0..8);
    let entries = proptest::collection::vec((key(), index(n)), 0..8);
    prop_oneof![
        Just(wit::ValueNode::Null),
        refinements().prop_map(wit::ValueNode::Unknown),
        any::<bool>().prop_map(wit::ValueNode::Boolean),
        any::<i64>().prop_map(wit::ValueNode::Integer),
        prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(-0.0)].prop_map(wit::ValueNode::Float),
        text().prop_map(wit::ValueNode::Text),
        indexes.clone().prop_map(wit::ValueNode::List),
        indexes.clone().prop_map(wit::ValueNode::Set),
        indexes.prop_map(wit::ValueNode::Tuple),
        entries.clone().prop_map(wit::ValueNode::Map),
        entries.prop_map(wit::ValueNode::Object),
    ]
}

/// Refinements of every kind, consistent or not (a lower bound above the
/// upper one, a length range that is empty).
fn refinements() -> impl Strategy<Value = wit::Refinements> {
    let bound = proptest::option::of(
        (any::<f64>(), any::<bool>())
            .prop_map(|(value, inclusive)| wit::NumberBound { value: wit::Number::Float(value), inclusive }),
    );
    let length = proptest::option::of(prop_oneof![0u64..8, Just(u64::MAX)]);
    (any::<bool>(), proptest::option::of(text()), bound.clone(), bound, length.clone(), length).prop_map(
        |(not_null, prefix, lower, upper, min_length, max_length)| wit::Refinements {
            not_null,
            prefix,
            lower,
            upper,
            min_length,
            max_length,
        },
    )
}

fn node(kind: wit::ValueNode) -> wit::Node {
    wit::Node { kind, sensitive: false }
}

/// Any graph of up to 48 nodes.
fn random_graph() -> impl Strategy<Value = wit::Value> {
    (1u32..48).prop_flat_map(|n| {
        proptest::collection::vec((node_kind(n), any::<bool>()), n as usize).prop_map(|nodes| wit::Value {
            nodes: nodes.into_iter().map(|(kind, sensitive)| wit::Node { kind, sensitive }).collect(),
        })
    })
}

/// Shapes a random graph rarely hits: a chain `depth` deep; one leaf
/// shared by `width` references; a diamond of `levels` levels, each node
/// referring twice to the next (2^levels paths); and a cycle.
fn shaped_graph() -> impl Strategy<Value = wit::Value> {
    prop_oneof![
        (1u32..2000).prop_map(|depth| {
            let mut nodes: Vec<_> = (1..depth).map(|i| node(wit::ValueNode::List(vec![i]))).collect();
            nodes.push(node(wit::ValueNode::Text("bottom".into())));
            wit::Value { nodes }
        }),
        (1usize..2_000_000, 0usize..1024).prop_map(|(width, len)| wit::Value {
            nodes: vec![node(wit::ValueNode::List(vec![1; width])), node(wit::ValueNode::Text("s".repeat(len)))],
        }),
        (1u32..200).prop_map(|levels| {
            let mut nodes: Vec<_> = (1..=levels).map(|i| node(wit::ValueNode::Tuple(vec![i, i]))).collect();
            nodes.push(node(wit::ValueNode::Integer(7)));
            wit::Value { nodes }
        }),
        (1u32..16).prop_map(|len| {
            let nodes = (0..len).map(|i| node(wit::ValueNode::Map(vec![("k".into(), (i + 1) % len)]))).collect();
            wit::Value { nodes }
        }),
    ]
}

/// A schema to hold decoded values against: every kind of type.
fn schema() -> Block {
    let attribute = |ty: Type| Attribute {
        ty,
        nested: None,
        write_only: false,
        required: false,
        optional: true,
        computed: true,
        sensitive: false,
        description: String::new(),
    };
    let mut block = Block::default();
    for (name, ty) in [
        ("s", Type::String),
        ("n", Type::Number),
        ("b", Type::Bool),
        ("d", Type::Dynamic),
        ("l", Type::List(Box::new(Type::String))),
        ("m", Type::Map(Box::new(Type::Number))),
        ("set", Type::Set(Box::new(Type::Dynamic))),
        ("k", Type::String),
        ("a", Type::Tuple(vec![Type::Bool, Type::String])),
    ] {
        block.attributes.insert(name.to_string(), attribute(ty));
    }
    block
}

/// What the host does with an answer's value: measure it, decode it within
/// the budgets, and hold it to the contracts against itself and a known
/// value. Only a panic (or a hang) fails.
fn take_answer(answer: &wit::Value, block: &Block) {
    let _ = answer.answer_size();
    let mut budget = wire::Budget::new(MAX_BYTES);
    let Ok(value) = decode_answer(answer, wire::MAX_DEPTH, &mut budget) else { return };
    let _ = wire::sensitive_marks(answer, &mut budget);
    let known = Value::object([("s", Value::string("x"))]);
    let _ = block.implied_type().check(&value);
    let _ = contract::check_compatible(block, &value, &value, true);
    let _ = contract::check_compatible(block, &known, &value, true);
    let _ = contract::check_compatible(block, &value, &known, false);
    let _ = contract::check_plan(block, &Value::Null, &value, &value);
    let _ = contract::check_plan(block, &value, &known, &value);
    let _ = contract::proposed_new(block, &value, &known);
}

#[test]
fn random_answers_end_in_a_value_or_an_error() {
    let block = schema();
    runner()
        .run(&random_graph(), |answer| {
            take_answer(&answer, &block);
            Ok(())
        })
        .unwrap();
}

#[test]
fn shaped_answers_end_in_a_value_or_an_error() {
    let block = schema();
    runner()
        .run(&shaped_graph(), |answer| {
            take_answer(&answer, &block);
            Ok(())
        })
        .unwrap();
}

#[test]
fn shared_nodes_count_once_per_reference() {
    // The extreme of the diamond shape: 65 nodes on the wire, 2^64 nodes
    // as a tree. Decoding stops at the budget, having spent no more than it.
    let mut nodes: Vec<_> = (1..=64u32).map(|i| node(wit::ValueNode::List(vec![i, i]))).collect();
    nodes.push(node(wit::ValueNode::Null));
    let diamond = wit::Value { nodes };
    let mut budget = wire::Budget::new(MAX_BYTES);
    let err = decode_answer(&diamond, 256, &mut budget).unwrap_err();
    assert_eq!(err, "returned an answer that decodes to more than the limit of 4 MiB");
    assert!(budget.spent() <= MAX_BYTES, "spent {} bytes", budget.spent());
}

fn type_node(n: u32) -> impl Strategy<Value = wit::TypeNode> {
    prop_oneof![
        Just(wit::TypeNode::Boolean),
        Just(wit::TypeNode::Number),
        Just(wit::TypeNode::Text),
        Just(wit::TypeNode::Dynamic),
        index(n).prop_map(wit::TypeNode::List),
        index(n).prop_map(wit::TypeNode::Set),
        index(n).prop_map(wit::TypeNode::Map),
        proptest::collection::vec((key(), index(n)), 0..4).prop_map(wit::TypeNode::Object),
        proptest::collection::vec(index(n), 0..4).prop_map(wit::TypeNode::Tuple),
    ]
}

fn type_expr() -> impl Strategy<Value = wit::TypeExpr> {
    (0u32..8)
        .prop_flat_map(|n| proptest::collection::vec(type_node(n.max(1)), n as usize))
        .prop_map(|nodes| wit::TypeExpr { nodes })
}

fn wire_block(n: u32) -> impl Strategy<Value = wit::Block> {
    let nested_type = proptest::option::of((0u8..4, index(n)).prop_map(|(nesting, block)| wit::NestedType {
        nesting: [wit::Nesting::Single, wit::Nesting::List, wit::Nesting::Set, wit::Nesting::Map][nesting as usize],
        block,
    }));
    let attribute =
        (key(), type_expr(), any::<[bool; 5]>(), nested_type).prop_map(|(name, type_, [r, o, c, s, w], nested)| {
            wit::Attribute {
                name,
                type_,
                nested,
                required: r,
                optional: o,
                computed: c,
                sensitive: s,
                write_only: w,
                description: String::new(),
            }
        });
    let nested = (key(), index(n), 0u8..4, any::<u32>(), any::<u32>()).prop_map(|(name, block, nesting, min, max)| {
        let nesting =
            [wit::Nesting::Single, wit::Nesting::List, wit::Nesting::Set, wit::Nesting::Map][nesting as usize];
        wit::NestedBlock { name, nesting, block, min_items: min, max_items: max }
    });
    (proptest::collection::vec(attribute, 0..4), proptest::collection::vec(nested, 0..3))
        .prop_map(|(attributes, blocks)| wit::Block { attributes, blocks, description: String::new() })
}

fn wire_schema() -> impl Strategy<Value = wit::ProviderSchema> {
    let schema = (0u32..6)
        .prop_flat_map(|n| proptest::collection::vec(wire_block(n.max(1)), n as usize))
        .prop_map(|blocks| wit::Schema { version: 0, blocks });
    (schema.clone(), proptest::collection::vec((key(), schema), 0..3))
        .prop_map(|(provider, resources)| wit::ProviderSchema { provider, resources, data_sources: Vec::new() })
}

#[test]
fn random_schemas_end_in_a_schema_or_an_error() {
    runner()
        .run(&(wire_schema(), random_graph()), |(schema, answer)| {
            let _ = schema.answer_size();
            if let Ok(decoded) = wire::provider_schema_from_wire(&schema, &mut wire::Budget::new(MAX_BYTES)) {
                for resource in decoded.resources.values() {
                    take_answer(&answer, &resource.block);
                }
            }
            Ok(())
        })
        .unwrap();
}
