resource "null_data" "a" {
  count = -1
}
