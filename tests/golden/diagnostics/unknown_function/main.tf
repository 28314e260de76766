locals {
  name = uper("web")
}
