resource "terraform_data" "a" {
  input = { a = 1, list = ["x", "y"], obj = { k = "v" } }
}

resource "terraform_data" "many" {
  count = 2
  input = "n${count.index}"
}

resource "terraform_data" "text" {
  input = "one\ntwo\n"
}

output "gone" {
  value = "here"
}

output "object" {
  value = { a = 1, list = ["x"] }
}
