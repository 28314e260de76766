provider "null" {}

resource "null_resource" "a" {}
