resource "null_data" "a" {}

resource "null_data" "a" {
  input = 1
}
