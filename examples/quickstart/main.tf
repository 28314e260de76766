# The quickstart: three bundled providers, each a WebAssembly component
# running in its own sandbox.
#
#   cargo run --release -- apply examples/quickstart
#
# writes examples/quickstart/out/hello.txt and cairn.state.json beside this file.

variable "greeting" {
  type        = string
  default     = "Hello from cairn"
  description = "The first line of the file. Try: -var 'greeting=Hi'"
}

# The local provider may write only inside ./out: the operator grants it that
# directory and nothing else. Without this block it could touch no file at all.
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

# Changing the greeting forces a new id (keepers), and the file that shows the
# id follows.
resource "random_id" "run" {
  byte_length = 4
  keepers = {
    greeting = var.greeting
  }
}

resource "random_password" "secret" {
  length  = 20
  special = false
}

locals {
  lines = [
    "${var.greeting}!",
    "This file was written by a sandboxed WebAssembly provider.",
    "Run id: ${random_id.run.hex}",
  ]
}

resource "local_file" "hello" {
  filename = "out/hello.txt"
  content  = "${join("\n", local.lines)}\n"
}

# terraform_data, as in Terraform 1.4+: keeps a value in the state (here a
# summary of the others) and replaces itself when `triggers_replace` changes.
resource "terraform_data" "summary" {
  input = {
    file   = local_file.hello.filename
    sha1   = local_file.hello.id
    run_id = random_id.run.hex
  }
}

output "file" {
  value = local_file.hello.filename
}

output "run_id" {
  value = random_id.run.hex
}

output "summary" {
  value = terraform_data.summary.output
}

output "password" {
  value     = random_password.secret.result
  sensitive = true
}
