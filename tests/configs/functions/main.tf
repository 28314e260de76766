# Terraform's function library, applied end to end. Each output is the
# example of the function's page on developer.hashicorp.com
# (/terraform/language/functions/NAME); tests/tests/all/functions.rs holds
# the results those pages give, and checks this configuration's outputs
# against them.

locals {
  regions = ["us-west", "us-east", "us-east"]
  people  = { alice = "dev", bob = "ops", carol = "dev" }
}

output "numbers" {
  value = {
    log      = log(16, 2)
    pow      = pow(3, 2)
    signum   = signum(-13)
    parseint = parseint("FF", 16)
    base62   = parseint("aA", 62)
  }
}

output "strings" {
  value = {
    indent      = indent(2, "[\n  foo,\n  bar,\n]\n")
    strcontains = strcontains("hello world", "wor")
    strrev      = strrev("hello")
    title       = title("hello world")
    replace     = replace("hello world", "/w.*d/", "everybody")
  }
}

output "collections" {
  value = {
    alltrue         = alltrue(["true", true])
    anytrue         = anytrue([])
    chunklist       = chunklist(["a", "b", "c", "d", "e"], 2)
    coalescelist    = coalescelist([], ["c", "d"])
    matchkeys       = matchkeys(["i-123", "i-abc", "i-def"], local.regions, ["us-east"])
    reverse         = reverse([1, 2, 3])
    setintersection = setintersection(["a", "b"], ["b", "c"], ["b", "d"])
    setproduct      = setproduct(["development", "staging"], ["app1", "app2"])
    setsubtract     = setsubtract(["a", "b", "c"], ["a", "c"])
    setunion        = setunion(["a", "b"], ["b", "c"], ["d"])
    transpose       = transpose({ "a" = ["1", "2"], "b" = ["2", "3"] })
  }
}

output "encodings" {
  value = {
    csvdecode   = csvdecode("a,b,c\n1,2,3\n4,5,6")
    urlencode   = urlencode("Hello World!")
    yamlencode  = yamlencode({ "foo" : [1, 2, 3], "bar" : "baz" })
    yamldecode  = yamldecode("hello: world")
    sha512      = sha512("hello world")
    textencode  = textencodebase64("Hello World", "UTF-16LE")
    uuidv5      = uuidv5("dns", "www.terraform.io")
    cidrsubnets = cidrsubnets("10.1.0.0/16", 4, 4, 8, 4)
  }
}

output "times" {
  value = {
    formatdate = formatdate("DD MMM YYYY hh:mm ZZZ", "2018-01-02T23:12:01Z")
    timeadd    = timeadd("2017-11-22T00:00:00Z", "10m")
    timecmp    = timecmp("2017-11-22T01:00:00Z", "2017-11-22T00:59:00Z")
  }
}

output "files" {
  value = {
    fileset    = fileset("${path.module}/files", "**/*.txt")
    filesha256 = filesha256("files/a.txt")
    filemd5    = filemd5("files/a.txt")
  }
}

output "splat_and_grouping" {
  value = {
    list    = [{ a = 1 }, { a = 2 }][*].a
    single  = { a = 1 }[*]
    of_null = null[*]
    legacy  = [{ a = { b = 1 } }].*.a.b
    by_team = { for name, team in local.people : team => name... }
  }
}

# Known only at apply: the plan shows "(known after apply)".
resource "terraform_data" "stamp" {
  input = timestamp()
}

output "stamped_at" {
  value = terraform_data.stamp.output
}
