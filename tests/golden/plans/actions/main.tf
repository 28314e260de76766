variable "v" {
  default = 0
}

resource "terraform_data" "keep" {
  input = var.v
}

resource "terraform_data" "rep" {
  input = "a"
}

resource "terraform_data" "cbd" {
  input = "b"
  lifecycle {
    create_before_destroy = true
  }
}

resource "terraform_data" "new" {
  count = var.v == 0 ? 0 : 1
  input = "n"
}
