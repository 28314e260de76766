resource "terraform_data" "created" {
  input = jsonencode({ a = 1, b = { c = "x", d = [1, 2, 3] }, "f g" = true })
}

resource "terraform_data" "gone" {
  input = jsonencode([1, "two"])
}

resource "terraform_data" "nested" {
  input = jsonencode({ a = 1, b = { c = "x", d = [1, 2, 3] }, e = "keep", "f g" = true, id = 7 })
}

resource "terraform_data" "spaces" {
  input = jsonencode({ a = 1 })
}

resource "terraform_data" "becomes_json" {
  input = "plain"
}

resource "terraform_data" "stops_being_json" {
  input = jsonencode(["x"])
}

resource "terraform_data" "in_an_object" {
  input = { policy = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow" }] }) }
}
