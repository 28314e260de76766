# The test file's provider blocks stand for the configuration's: without
# a run's providers map all of them do, with one only those it names.

provider "null" {}

provider "null" {
  alias = "alt"
}

run "own" {
  assert {
    condition     = null_resource.a.id != ""
    error_message = "no id"
  }
}

run "mapped" {
  providers = {
    null = null.alt
  }
}

run "undeclared" {
  providers = {
    null = null.missing
  }
}

run "skipped" {}
