resource "terraform_data" "deep" {
  input = "deep"
}

output "v" {
  value = terraform_data.deep.output
}
