variable "v" {
  default = 0
}

locals {
  before = [[1, 2, 3, 4, 5, 6], ["a", "b"], [1, 2, 3], { id = "x", k = 1, z = 2 }, [{ a = 1, b = 2 }, { a = 3, b = 4 }], "s"]
  after  = [[1, 2, 30, 4, 5, 6], ["c", "a", "b"], [1, 3], { id = "x", k = 2, z = 2 }, [{ a = 1, b = 2 }, { a = 3, b = 5 }], "t"]
}

resource "terraform_data" "l" {
  count = 6
  input = var.v == 0 ? local.before[count.index] : local.after[count.index]
}

resource "terraform_data" "m" {
  input = { id = "same", x = var.v, "a-b" = 1, name = "n", tags = { a = 1 }, nested = { deep = [var.v] } }
}

resource "terraform_data" "text" {
  input = var.v == 0 ? "line one\nline two\nline three\n" : "line one\nline 2\nline three\n"
}

output "o" {
  value = { a = var.v, b = "x" }
}

output "longer_name" {
  value = var.v
}
