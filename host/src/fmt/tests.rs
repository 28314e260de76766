//! Each case was formatted by `terraform fmt` (1.11.4); the formatter must
//! give the same text, and leave that text as it is.

use super::format_source;

/// (file name, input, what `terraform fmt` wrote).
const CASES: &[(&str, &str, &str)] = &[
    (
        "01_align.tf",
        r#"resource "local_file" "a" {
filename="out/a.txt"
  content = "hi"   # the greeting
    file_permission    =   "0644" // mode
  tags = {
      name="x"
    long_name = "y"
  }
}
"#,
        r#"resource "local_file" "a" {
  filename        = "out/a.txt"
  content         = "hi"   # the greeting
  file_permission = "0644" // mode
  tags = {
    name      = "x"
    long_name = "y"
  }
}
"#,
    ),
    (
        "02_exprs.tf",
        r#"locals {
  a = [ 1,2 , 3 ]
  b = { x=1, y = -2 }
  c = var.n*2+1-(3 - -1)
  d = !var.flag && var.x>=2 || var.y!=3
  e = [for x in [1,2]: x*2 if x>0]
  f = {for k,v in var.m: k=>v...}
  g = var.list[0].name
  h = var.cond ? "yes" : "no"
  i = upper( "x" )
  j = local.items[*].id
  k = "${var.a}-${ var.b }"
  l = length(var.xs)
  m = {}
  n = []
}
"#,
        r#"locals {
  a = [1, 2, 3]
  b = { x = 1, y = -2 }
  c = var.n * 2 + 1 - (3 - -1)
  d = !var.flag && var.x >= 2 || var.y != 3
  e = [for x in [1, 2] : x * 2 if x > 0]
  f = { for k, v in var.m : k => v... }
  g = var.list[0].name
  h = var.cond ? "yes" : "no"
  i = upper("x")
  j = local.items[*].id
  k = "${var.a}-${var.b}"
  l = length(var.xs)
  m = {}
  n = []
}
"#,
    ),
    (
        "03_unwrap.tf",
        r#"variable "x" {
  type = "string"
}
variable "y" {
  type = list
}
variable "z" {
  type = "map"
  default = {}
}
resource "null_resource" "n" {
  triggers = {
    a = "${var.x}"
  }
  id2 = "${var.x}"
  id3 = "${var.x}-suffix"
}
output "o" {
  value = "${var.x}"
}
"#,
        r#"variable "x" {
  type = string
}
variable "y" {
  type = list(any)
}
variable "z" {
  type    = map(string)
  default = {}
}
resource "null_resource" "n" {
  triggers = {
    a = "${var.x}"
  }
  id2 = var.x
  id3 = "${var.x}-suffix"
}
output "o" {
  value = var.x
}
"#,
    ),
    (
        "04_heredoc.tf",
        r#"resource "local_file" "h" {
    content = <<EOT
  keep   this
${var.x}
EOT
    other = <<-EOT
      indented
      EOT
}

# a comment
/* block
   comment */
module "m" {
source="./m"
}
"#,
        r#"resource "local_file" "h" {
  content = <<EOT
  keep   this
${var.x}
EOT
  other   = <<-EOT
      indented
      EOT
}

# a comment
/* block
   comment */
module "m" {
  source = "./m"
}
"#,
    ),
    (
        "05_nested.tf",
        r#"resource "x" "y" {
  dynamic "setting" {
    for_each = var.settings
    content {
      name = setting.key
      value = setting.value
    }
  }
  lifecycle {
  ignore_changes = [tags]
  }
  list = [
  1,
  2,
  ]
  call = merge(
    var.a,
  {b = 1},
  )
}
"#,
        r#"resource "x" "y" {
  dynamic "setting" {
    for_each = var.settings
    content {
      name  = setting.key
      value = setting.value
    }
  }
  lifecycle {
    ignore_changes = [tags]
  }
  list = [
    1,
    2,
  ]
  call = merge(
    var.a,
    { b = 1 },
  )
}
"#,
    ),
    (
        "06_templates.tf",
        r#"locals {
  greeting = "Hello, %{ if var.name != "" }${var.name}%{ else }stranger%{ endif }!"
  nested = "${upper("${var.a}-x")}"
  list = [for s in ["a","b"]: "${s}!"]
  esc = "$${literal} and %%{literal}"   
  cond = (
    var.a
    ? 1
    : 2
  )
  tags = merge(local.common, {Name="x"})
  idx = var.m["key"]
  neg = -1
  math = 1-1
  obj = {
    "quoted key" = 1
    other = 2 # trailing
  }


  after_blank = true
}
"#,
        r#"locals {
  greeting = "Hello, %{if var.name != ""}${var.name}%{else}stranger%{endif}!"
  nested   = upper("${var.a}-x")
  list     = [for s in ["a", "b"] : "${s}!"]
  esc      = "$${literal} and %%{literal}"
  cond = (
    var.a
    ? 1
    : 2
  )
  tags = merge(local.common, { Name = "x" })
  idx  = var.m["key"]
  neg  = -1
  math = 1 - 1
  obj = {
    "quoted key" = 1
    other        = 2 # trailing
  }


  after_blank = true
}
"#,
    ),
    (
        "07_tfvars.tfvars",
        r#"region="eu-west-1"
instance_count=3
tags={env="dev"}
"#,
        r#"region         = "eu-west-1"
instance_count = 3
tags           = { env = "dev" }
"#,
    ),
    (
        "08_labels.tf",
        r#"resource aws_instance web {
  ami = "x"
}
locals {
  a = 1
}
module m {
  source = "./m"
}
"#,
        r#"resource "aws_instance" "web" {
  ami = "x"
}
locals {
  a = 1
}
module "m" {
  source = "./m"
}
"#,
    ),
];

#[test]
fn formats_as_terraform_does() {
    for (name, input, expected) in CASES {
        let formatted = format_source(input, name).unwrap();
        assert_eq!(formatted, *expected, "{name}");
        assert_eq!(format_source(expected, name).unwrap(), *expected, "{name} is already formatted");
    }
}

#[test]
fn syntax_errors_say_where() {
    let err = format_source("a = {\n", "bad.tf").unwrap_err();
    assert!(err.starts_with("bad.tf:"), "{err}");
}
