variable "name" {
  type = string
}

resource "terraform_data" "a" {
  input = var.name
}

resource "terraform_data" "b" {
  count = 2
  input = "b${count.index}"
}

output "out" {
  value = terraform_data.a.output
}

output "id" {
  value = terraform_data.a.id
}
