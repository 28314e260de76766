resource "random_id" "x" {
  keepers = { a = "b" }
}
