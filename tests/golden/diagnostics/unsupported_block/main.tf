resource "null_data" "a" {
  settings {
    x = 1
  }
}
