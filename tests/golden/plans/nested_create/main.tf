resource "terraform_data" "a" {
  input = {
    a                = 1
    bee              = "x"
    list             = [1, 2, "three"]
    "key with space" = { nested = true, n = null }
    empty            = {}
    none             = []
  }
}

resource "terraform_data" "many" {
  count = 2
  input = "n${count.index}"
}

resource "terraform_data" "text" {
  input = "line one\nline two\nline three\n"
}

output "short" {
  value = terraform_data.a.output
}

output "a_much_longer_name" {
  value = { k = "x", l = [true] }
}
