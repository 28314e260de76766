resource "null_data" "a" {
  input = random_id.nope.hex
}
