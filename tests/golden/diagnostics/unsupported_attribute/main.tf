resource "random_id" "x" {
  byte_length = 4
}

output "o" {
  value = random_id.x.hexx
}
