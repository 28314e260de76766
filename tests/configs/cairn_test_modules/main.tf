variable "name" {
  type = string
}

resource "terraform_data" "a" {
  input = var.name
}

module "m" {
  source = "./m"
}

output "out" {
  value = terraform_data.a.output
}

output "id" {
  value = terraform_data.a.id
}

output "deep" {
  value = module.m.v
}
