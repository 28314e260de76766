variable "v" {
  default = 0
}

resource "terraform_data" "a" {
  input = "same"
}

output "x" {
  value = var.v
}

output "a_longer_one" {
  value = "fixed"
}
