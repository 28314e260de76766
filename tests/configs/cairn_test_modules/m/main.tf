module "n" {
  source = "./n"
}

output "v" {
  value = module.n.v
}
