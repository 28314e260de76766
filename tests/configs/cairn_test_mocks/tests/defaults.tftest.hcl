mock_provider "terraform" {
  mock_resource "terraform_data" {
    defaults = {
      id = "mocked"
    }
  }
}

variables {
  name = "gamma"
}

run "defaults_at_apply" {
  assert {
    condition     = terraform_data.b[0].id == "mocked" && output.out == null
    error_message = "b[0] is ${terraform_data.b[0].id}"
  }
}
