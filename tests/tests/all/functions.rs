//! Terraform's function library, splat and `for` grouping, applied end to
//! end: `tests/configs/functions` is applied with the real binary and each
//! output compared with what Terraform's documentation gives for the same
//! example (the page is developer.hashicorp.com/terraform/language/
//! functions/NAME; each figure was also checked with `terraform console`
//! 1.11.4). Then `timestamp()` is unknown in the plan and known at apply.

use cairn_e2e::{Workdir, repo_root};
use serde_json::{Value, json};

/// A copy of `tests/configs/functions`, subdirectories included.
fn functions_config() -> Workdir {
    let w = Workdir::new();
    let src = repo_root().join("tests/configs/functions");
    for path in ["main.tf", "files/a.txt", "files/sub/b.txt"] {
        w.write(path, &std::fs::read_to_string(src.join(path)).unwrap());
    }
    w
}

fn outputs(w: &Workdir) -> Value {
    let run = w.cairn_here(&["output", "-json"]).success();
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let values = json.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v["value"].clone()));
    Value::Object(values.collect())
}

#[test]
fn functions_give_what_terraform_documents() {
    let w = functions_config();
    let plan = w.cairn(&["plan"]).success();
    // A resource attribute set from timestamp() waits for apply.
    assert!(plan.stdout.contains("+ input  = (known after apply)"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    let out = outputs(&w);

    // log: "log(16, 2)" is 4; pow: "pow(3, 2)" is 9; signum: "signum(-13)"
    // is -1; parseint: "parseint("FF", 16)" is 255, "parseint("aA", 62)" 656.
    assert_eq!(out["numbers"], json!({"log": 4, "pow": 9, "signum": -1, "parseint": 255, "base62": 656}));
    // indent: the doc's block, every line but the first indented by 2;
    // strcontains("hello world", "wor") is true; strrev("hello") "olleh";
    // title("hello world") "Hello World"; replace("hello world", "/w.*d/",
    // "everybody") "hello everybody".
    assert_eq!(
        out["strings"],
        json!({
            "indent": "[\n    foo,\n    bar,\n  ]\n  ",
            "strcontains": true,
            "strrev": "olleh",
            "title": "Hello World",
            "replace": "hello everybody"
        })
    );
    // Each as on its page: alltrue(["true", true]) is true, anytrue([])
    // false, chunklist by 2, coalescelist skipping the empty list, matchkeys
    // of the us-east instances, reverse, the set operations, setproduct (the
    // page's first example, two environments), transpose.
    assert_eq!(
        out["collections"],
        json!({
            "alltrue": true,
            "anytrue": false,
            "chunklist": [["a", "b"], ["c", "d"], ["e"]],
            "coalescelist": ["c", "d"],
            "matchkeys": ["i-abc", "i-def"],
            "reverse": [3, 2, 1],
            "setintersection": ["b"],
            "setproduct": [["development", "app1"], ["development", "app2"], ["staging", "app1"], ["staging", "app2"]],
            "setsubtract": ["b"],
            "setunion": ["a", "b", "c", "d"],
            "transpose": {"1": ["a"], "2": ["a", "b"], "3": ["b"]}
        })
    );
    // csvdecode, urlencode("Hello World!"), yamlencode's second example,
    // yamldecode("hello: world"), sha512("hello world"),
    // textencodebase64("Hello World", "UTF-16LE"), uuidv5("dns",
    // "www.terraform.io"), cidrsubnets("10.1.0.0/16", 4, 4, 8, 4).
    assert_eq!(
        out["encodings"],
        json!({
            "csvdecode": [{"a": "1", "b": "2", "c": "3"}, {"a": "4", "b": "5", "c": "6"}],
            "urlencode": "Hello+World%21",
            "yamlencode": "\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n- 3\n",
            "yamldecode": {"hello": "world"},
            "sha512": "309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f",
            "textencode": "SABlAGwAbABvACAAVwBvAHIAbABkAA==",
            "uuidv5": "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
            "cidrsubnets": ["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"]
        })
    );
    // formatdate("DD MMM YYYY hh:mm ZZZ", "2018-01-02T23:12:01Z"),
    // timeadd("2017-11-22T00:00:00Z", "10m"), timecmp of 01:00 and 00:59.
    assert_eq!(
        out["times"],
        json!({"formatdate": "02 Jan 2018 23:12 UTC", "timeadd": "2017-11-22T00:10:00Z", "timecmp": 1})
    );
    // fileset matches below its directory; the hashes are of "hi\n".
    assert_eq!(
        out["files"],
        json!({
            "fileset": ["a.txt", "sub/b.txt"],
            "filesha256": "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4",
            "filemd5": "764efa883dda1e11db47671c4a3bbd9e"
        })
    );
    // developer.hashicorp.com/terraform/language/expressions/splat and
    // …/expressions/for ("Grouping Results").
    assert_eq!(
        out["splat_and_grouping"],
        json!({
            "list": [1, 2],
            "single": [{"a": 1}],
            "of_null": [],
            "legacy": [1],
            "by_team": {"dev": ["alice", "carol"], "ops": ["bob"]}
        })
    );
    // timestamp() at apply: an RFC 3339 time in UTC.
    let stamp = out["stamped_at"].as_str().unwrap();
    assert!(stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "{stamp}");
}
