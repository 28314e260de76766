variable "path" {}
variable "text" {}
resource "local_file" "f" {
  filename = var.path
  content  = var.text
}
output "path" {
  value = local_file.f.filename
}
