# A setup module that runs of the tests apply before the configuration
# under test, with its own variable and state.
variable "prefix" {
  type = string
}

resource "terraform_data" "s" {
  input = "${var.prefix}-setup"
}

output "name" {
  value = terraform_data.s.output
}

output "id" {
  value = terraform_data.s.id
}
