variable "password" {
  type      = string
  default   = "hunter2"
  sensitive = true
}

output "connection" {
  value = "user:${var.password}@db"
}
