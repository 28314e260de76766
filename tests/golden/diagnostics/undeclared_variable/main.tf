output "o" {
  value = var.regoin
}

variable "region" {
  default = "eu"
}
