# A real-world-shaped configuration: a module called once per site
# (for_each), which calls a page module once per page (count), with the
# sites' files written through an aliased provider configuration passed
# down with providers = { … }, and the modules' outputs flowing back up.
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}
provider "local" {
  alias = "other"
  sandbox {
    read_write = ["./out"]
  }
}
locals {
  sites = {
    blog = { pages = 2 }
    docs = { pages = 1 }
  }
}
module "site" {
  source   = "./modules/site"
  for_each = local.sites
  name     = each.key
  pages    = each.value.pages
  providers = {
    local = local.other
  }
}
module "extra" {
  source = "./modules/site/modules/page"
  count  = 1
  path   = "out/extra-${count.index}.txt"
  text   = join(",", [for k, s in module.site : s.index])
}
output "indexes" {
  value = { for k, s in module.site : k => s.index }
}
