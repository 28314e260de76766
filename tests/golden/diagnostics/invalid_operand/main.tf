locals {
  total = "ten" + 1
}
