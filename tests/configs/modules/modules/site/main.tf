variable "name" {
  type = string
}
variable "pages" {
  type    = number
  default = 1
}
module "page" {
  source = "./modules/page"
  count  = var.pages
  path   = "out/${var.name}/page-${count.index}.txt"
  text   = "page ${count.index} of ${var.name}"
}
resource "local_file" "index" {
  filename = "out/${var.name}/index.txt"
  content  = join("\n", module.page[*].path)
}
output "index" {
  value = local_file.index.filename
}
