resource "terraform_data" "counted" {
  count = 3
  input = count.index
}

resource "terraform_data" "each" {
  for_each = toset(["a", "b"])
  input    = each.key
}

resource "terraform_data" "gone" {
  input = "g"
}

resource "terraform_data" "again" {
  input = "r"
}

resource "terraform_data" "was_counted" {
  count = 2
  input = "w"
}
